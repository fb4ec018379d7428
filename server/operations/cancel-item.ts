import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import type { WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { notFound, WorkGraphError } from "../errors";
import { lockItem } from "../sql/fencing";
import { endExpiredLeases, unendedLeaseOf } from "../sql/leases";
import { cancelSubtree } from "./cancel-subtree";
import { selectWorkItem } from "../sql/work-items";
import { refuseItemOutsideScope } from "../sql/visibility";

/**
 * Operator cancel. Never pre-empts (rule 5 (no pre-emption)): a live lease on the item or on any open
 * descendant refuses with ITEM_LEASED. Open descendants are cancelled with it.
 */
export async function cancelWorkItem(db: Db, caller: Caller, input: { id: string; reason: string }): Promise<WorkItem> {
  return inTransaction(db, async (tx) => {
    await refuseItemOutsideScope(tx, caller, input.id);
    const item = await lockItem(tx, input.id);
    if (!item) throw notFound("work item", input.id);
    if (item.status !== "open") {
      throw new WorkGraphError("ALREADY_TERMINAL", `work item ${input.id} is already ${item.status}`, { workItemId: input.id, status: item.status });
    }
    await endExpiredLeases(tx, [input.id]);
    const lease = await unendedLeaseOf(tx, input.id);
    if (lease) {
      throw new WorkGraphError("ITEM_LEASED", `work item ${input.id} is leased by ${lease.workerId} until ${lease.expiresAt.toISOString()}; it ends only by its worker or by expiry`, {
        workItemId: input.id,
        leaseId: lease.leaseId,
        workerId: lease.workerId,
      });
    }
    await cancelSubtree(tx, item, caller.actor, { reason: input.reason });
    return (await selectWorkItem(tx, input.id))!;
  });
}
