import type { Db } from "../db";
import { inTransaction, retryingConflicts } from "../database/transaction";
import { actingWorker, isLiveLease, lockLeaseItem, refuseStaleLease } from "../domain/fencing";
import type { Caller, Lease } from "../domain/types";
import { LEASE_COLUMNS, toLease, type LeaseRow } from "../domain/views";
import { announceLocally } from "../realtime/wakeups";

export interface RenewInput {
  leaseId: string;
  epoch: number;
  durationSeconds: number;
  workerId?: string;
}

/**
 * New expiry = database now + duration (it may shorten the lease). An expired lease cannot be
 * revived: fencing refuses it. One autocommit statement (renewals are frequent: the MCP server
 * renews every third of a lease); a refusal is classified afterwards, under the item's lock.
 */
export async function renew(db: Db, caller: Caller, input: RenewInput): Promise<Lease> {
  const [renewed] = await retryingConflicts(() => db.$queryRaw<LeaseRow[]>`
    WITH ${lockLeaseItem(input.leaseId)},
    l AS (
      UPDATE leases l SET expires_at = clock_timestamp() + make_interval(secs => ${input.durationSeconds}), renewed_at = clock_timestamp()
        FROM item WHERE ${isLiveLease(input.leaseId, input.epoch, actingWorker(caller, input.workerId))}
      RETURNING l.*
    ), w AS (
      UPDATE work_items w SET lease_expires_at = l.expires_at FROM l WHERE w.id = l.work_item_id
    ), logged AS (
      INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
      SELECT l.work_item_id, 'lease.renewed', l.worker_id, l.id, l.epoch, jsonb_build_object('expiresAt', l.expires_at) FROM l
    )
    SELECT ${LEASE_COLUMNS} FROM l`);
  if (!renewed) return inTransaction(db, (tx) => refuseStaleLease(tx, caller, input.leaseId, input.epoch, input.workerId));
  announceLocally(db, ["lease.renewed"]);
  return toLease(renewed);
}
