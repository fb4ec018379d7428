import { Prisma } from "../generated/prisma/client";
import type { Tx } from "../database/transaction";
import { countLeaseEnded } from "../metrics";
import { LEASE_COLUMNS, type LeaseRow } from "./views";

/** How a lease ended (API.md; operator control adds "revoked"). */
export type LeaseOutcome = "released" | "cancelled" | "decomposed" | "attention_requested" | "expired" | "revoked";

/**
 * Ends the live lease `lease` now (database clock) with `outcome`, in one statement: the lease
 * row, its item's current-lease fields (the worker becomes the previous worker; `updated_at`),
 * and the `lease.ended` event by `actor` carrying `data`. `itemChanges` folds further column
 * changes of the same item row into that update (e.g. a counter). The caller has fenced and
 * locked the lease (lockCurrentLease). Returns the ended lease.
 */
export async function endLease(
  tx: Tx,
  lease: { id: string },
  outcome: LeaseOutcome,
  actor: string,
  data: Record<string, unknown> = {},
  itemChanges: Prisma.Sql = Prisma.empty,
): Promise<LeaseRow> {
  const [ended] = await tx.$queryRaw<LeaseRow[]>`
    WITH l AS (
      UPDATE leases SET ended_at = clock_timestamp(), outcome = ${outcome} WHERE id = ${lease.id}::uuid AND ended_at IS NULL RETURNING *
    ), item AS (
      UPDATE work_items w SET current_lease_id = NULL, lease_expires_at = NULL, previous_worker_id = l.worker_id, updated_at = l.ended_at
             ${itemChanges}
        FROM l WHERE w.id = l.work_item_id
    ), logged AS (
      INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
      SELECT l.work_item_id, 'lease.ended', ${actor}, l.id, l.epoch,
             jsonb_build_object('outcome', l.outcome, 'workerId', l.worker_id) || ${JSON.stringify(data)}::jsonb FROM l
    )
    SELECT ${LEASE_COLUMNS} FROM l`;
  if (!ended) throw new Error(`lease ${lease.id} was not live when ending it as ${outcome}`);
  countLeaseEnded(tx, ended);
  return ended;
}
