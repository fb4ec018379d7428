import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { CLEAR_CONTINUITY } from "../domain/readiness";
import type { Lease, WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toLease } from "../domain/views";
import { refuseStaleLease } from "../sql/fencing";
import { endLease } from "../sql/leases";
import { selectWorkItem } from "../sql/work-items";
import { refuseLeaseOutsideScope } from "../sql/visibility";
import { cancelWhereLeaseEnded } from "./lease-end-cancellation";

export interface RevokeInput {
  leaseId: string;
  epoch: number;
  reason: string;
}

/**
 * An operator ends someone's live lease now (rule 5 (no pre-emption): explicit and audited): outcome `revoked`, endedAt = database
 * now, the operator as the event's actor with the reason. Checked and ended under the item's
 * row lock like every lease-bound write, so it races a release or renewal cleanly: whichever
 * takes the lock first wins, the other is refused. The item stays open and is ready again by
 * the normal rules; no continuity preference is set (continuity comes only from answered
 * attention requests), and the worker's later calls are fenced with kind `revoked`.
 */
export async function revokeLease(db: Db, caller: Caller, input: RevokeInput): Promise<{ lease: Lease; workItem: WorkItem }> {
  return inTransaction(db, async (tx) => {
    await refuseLeaseOutsideScope(tx, caller, input.leaseId);
    const presented = { leaseId: input.leaseId, epoch: input.epoch, workerId: null };
    const revoked = await endLease(tx, presented, "revoked", caller.actor, { reason: input.reason }, CLEAR_CONTINUITY);
    if (!revoked) return refuseStaleLease(tx, caller, input.leaseId, input.epoch);
    await cancelWhereLeaseEnded(tx, [revoked.workItemId]);
    return { lease: toLease(revoked), workItem: (await selectWorkItem(tx, revoked.workItemId))! };
  });
}
