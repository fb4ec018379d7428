import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import type { WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { notFound, WorkGraphError } from "../errors";
import { appendEvents } from "../sql/events";
import { lockItem } from "../sql/fencing";
import { refuseItemOutsideScope } from "../sql/visibility";
import { selectWorkItem, updateItemFields, type ItemFieldChanges } from "../sql/work-items";

export type UpdateInput = { id: string } & ItemFieldChanges;

/**
 * workItems.update: changes an open item's title, description, `requires`, concurrency key or
 * time gate. Never pre-empts a live lease (rule 5 (no pre-emption)): a leased item keeps its
 * lease, the new values apply from its next claim, and the lease keeps counting toward the key
 * it was claimed under (leases.concurrency_key). The `work_item.updated` event wakes waiting
 * claims and stream readers (a new notBefore or `requires` may make it claimable).
 */
export async function updateWorkItem(db: Db, caller: Caller, input: UpdateInput): Promise<WorkItem> {
  return inTransaction(db, async (tx) => {
    await refuseItemOutsideScope(tx, caller, input.id);
    const item = await lockItem(tx, input.id);
    if (!item) throw notFound("work item", input.id);
    if (item.status !== "open") {
      throw new WorkGraphError("ALREADY_TERMINAL", `work item ${input.id} is already ${item.status}`, { workItemId: input.id, status: item.status });
    }
    const { id, ...changes } = input;
    const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as ItemFieldChanges;
    if (given.requires !== undefined) given.requires = [...new Set(given.requires)].sort();
    if (Object.keys(given).length === 0) return (await selectWorkItem(tx, id))!;
    await updateItemFields(tx, id, given);
    const updated = (await selectWorkItem(tx, id))!;
    const changed = Object.fromEntries(Object.keys(given).map((field) => [field, updated[field as keyof ItemFieldChanges]]));
    await appendEvents(tx, [{ workItemId: id, type: "work_item.updated", actor: caller.actor, data: changed }]);
    return updated;
  });
}
