import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { isLiveLease, lockLeaseItem, refuseStaleLease } from "../domain/fencing";
import { endLeasesSql } from "../domain/leases";
import type { Caller, Lease, WorkItem } from "../domain/types";
import { LEASE_COLUMNS, selectWorkItem, toLease, type LeaseRow } from "../domain/views";
import { countLeaseEnded } from "../metrics";

export interface RevokeInput {
  leaseId: string;
  epoch: number;
  reason: string;
}

/**
 * An operator ends someone's live lease now (rule 5): outcome `revoked`, endedAt = database
 * now, the operator as the event's actor with the reason. Checked and ended under the item's
 * row lock like every lease-bound write, so it races a release or renewal cleanly: whichever
 * takes the lock first wins, the other is refused. The item stays open and is ready again by
 * the normal rules; no continuity preference is set (continuity comes only from answered
 * attention requests), and the worker's later calls are fenced with kind `revoked`.
 */
export async function revokeLease(db: Db, caller: Caller, input: RevokeInput): Promise<{ lease: Lease; workItem: WorkItem }> {
  return inTransaction(db, async (tx) => {
    const [revoked] = await tx.$queryRaw<LeaseRow[]>`
      WITH ${lockLeaseItem(input.leaseId)},
      ${endLeasesSql({
        from: Prisma.sql`item`,
        which: isLiveLease(input.leaseId, input.epoch, null),
        outcome: "revoked",
        actor: caller.actor,
        data: Prisma.sql`jsonb_build_object('reason', ${input.reason}::text)`,
        itemChanges: Prisma.sql`, continuity_worker_id = NULL, continuity_since = NULL`,
      })}
      SELECT ${LEASE_COLUMNS} FROM l`;
    if (!revoked) return refuseStaleLease(tx, caller, input.leaseId, input.epoch);
    countLeaseEnded(tx, revoked);
    return { lease: toLease(revoked), workItem: (await selectWorkItem(tx, revoked.workItemId))! };
  });
}
