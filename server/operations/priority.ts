import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { appendEvents } from "../domain/events";
import { lockItem } from "../domain/fencing";
import type { Caller, WorkItem } from "../domain/types";
import { selectWorkItem } from "../domain/views";
import { notFound, WorkGraphError } from "../errors";

/** Changes queue order only; a live lease is never pre-empted by it (rule 5). */
export async function setPriority(db: Db, caller: Caller, input: { id: string; priority: number }): Promise<WorkItem> {
  return inTransaction(db, async (tx) => {
    const item = await lockItem(tx, input.id);
    if (!item) throw notFound("work item", input.id);
    if (item.status !== "open") {
      throw new WorkGraphError("ALREADY_TERMINAL", `work item ${input.id} is already ${item.status}`, { workItemId: input.id, status: item.status });
    }
    await tx.$executeRaw`UPDATE work_items SET priority = ${input.priority}, updated_at = clock_timestamp() WHERE id = ${input.id}`;
    await appendEvents(tx, [{ workItemId: input.id, type: "work_item.priority_changed", actor: caller.actor, data: { from: item.priority, to: input.priority } }]);
    return (await selectWorkItem(tx, input.id))!;
  });
}
