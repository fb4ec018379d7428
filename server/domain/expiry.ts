import type { Tx } from "../database/transaction";
import { countLeasesEnded } from "../metrics";

/** Actor recorded on events the service causes by itself (expiry). */
export const SYSTEM_ACTOR = "system";

/**
 * Rule 7: ends the unended leases of the given (already locked) items whose time has run out,
 * as `expired` with endedAt = their expiresAt, and clears them from their items. Used by
 * reclaim and by the background sweep, so both emit the same events. Returns the ended leases.
 * (The set-based counterpart of endLease in ./leases.ts: many leases, each ended at its own
 * expiry instead of now.)
 */
export async function endExpiredLeases(tx: Tx, itemIds: string[]): Promise<{ id: string; workItemId: string }[]> {
  if (itemIds.length === 0) return [];
  const ended = await tx.$queryRaw<{ id: string; workItemId: string; acquiredAt: Date; endedAt: Date }[]>`
    WITH ended AS (
      UPDATE leases SET ended_at = expires_at, outcome = 'expired'
       WHERE work_item_id = ANY(${itemIds}::text[]) AND ended_at IS NULL AND expires_at <= statement_timestamp()
      RETURNING id, work_item_id, worker_id, epoch, acquired_at, expires_at
    ), cleared AS (
      UPDATE work_items w SET current_lease_id = NULL, lease_expires_at = NULL, previous_worker_id = ended.worker_id,
             updated_at = clock_timestamp()
        FROM ended WHERE w.id = ended.work_item_id
    ), logged AS (
      INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
      SELECT work_item_id, 'lease.ended', ${SYSTEM_ACTOR}, id, epoch,
             jsonb_build_object('outcome', 'expired', 'workerId', worker_id, 'endedAt', expires_at)
        FROM ended
    )
    SELECT id::text, work_item_id AS "workItemId", acquired_at AS "acquiredAt", expires_at AS "endedAt" FROM ended`;
  countLeasesEnded(tx, "expired", ended);
  return ended;
}
