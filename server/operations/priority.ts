import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import type { WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { notFound, WorkGraphError } from "../errors";
import { appendEvents } from "../sql/events";
import { lockItem } from "../sql/fencing";
import { selectWorkItem, setPriority as updatePriority } from "../sql/work-items";
import { refuseItemOutsideScope } from "../sql/visibility";

/** Changes queue order only (rule 10 (queue order)); a live lease is never pre-empted by it (rule 5 (no pre-emption)). */
export async function setPriority(db: Db, caller: Caller, input: { id: string; priority: number }): Promise<WorkItem> {
  return inTransaction(db, async (tx) => {
    await refuseItemOutsideScope(tx, caller, input.id);
    const item = await lockItem(tx, input.id);
    if (!item) throw notFound("work item", input.id);
    if (item.status !== "open") {
      throw new WorkGraphError("ALREADY_TERMINAL", `work item ${input.id} is already ${item.status}`, { workItemId: input.id, status: item.status });
    }
    await updatePriority(tx, input.id, input.priority);
    await appendEvents(tx, [{ workItemId: input.id, type: "work_item.priority_changed", actor: caller.actor, data: { from: item.priority, to: input.priority } }]);
    return (await selectWorkItem(tx, input.id))!;
  });
}
