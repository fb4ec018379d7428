import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import { staticSql, sqlParameter } from "../database/static-sql";
import { inTransaction, retryingConflicts } from "../database/transaction";
import { actingWorker, isLiveLease, lockCurrentLease, lockLeaseItem, refuseStaleLease } from "../domain/fencing";
import { HAS_UNBLOCKED, PROPAGATE_TERMINATION, SHIFT_BELOW_UNBLOCKED } from "../domain/readiness";
import { endLease, endLeasesSql } from "../domain/leases";
import { cancelSubtree } from "../domain/termination";
import type { Caller, Lease, WorkItem } from "../domain/types";
import { countLeaseEnded } from "../metrics";
import { LEASE_COLUMNS, selectWorkItem, toLease, toWorkItem, WORK_ITEM_COLUMNS, type LeaseRow, type WorkItemRow } from "../domain/views";

export interface ReleaseInput {
  leaseId: string;
  epoch: number;
  evidence: string;
  links?: string[];
  workerId?: string;
}

export interface CancelInput {
  leaseId: string;
  epoch: number;
  reason: string;
  workerId?: string;
}

/**
 * Release: the worker finishes. The fenced lease ends as `released`, the item becomes
 * `released`, and its dependents and parent are unblocked — they are ready when it commits.
 * Only the item itself changes: open children it may have gained while leased stay open.
 *
 * It is one call of the SQL function RELEASE_LEASE_FUNCTION builds from the statements below
 * (a release is on every agent's hot path: one round trip, no interactive transaction). Its
 * statements, each with a fresh snapshot:
 *   1. lock_for_release (migration 20261203160000): the item's row lock, then its dependents'
 *      in id order (the global lock order: two releases with shared dependents would otherwise
 *      update them in join order and could deadlock). Had the fused statement waited for the
 *      item itself (a new dependency on it holds it FOR SHARE until it commits), its snapshot
 *      would miss that committed edge and leave the dependent blocked by a released item.
 *   2. The fused statement: fenced lease end, item released, dependents and parent unblocked.
 *   3. When it unblocked any dependent, SHIFT_BELOW_UNBLOCKED in a statement of its own: had
 *      the one above waited for a dependent's row (a move or a new child under it), its
 *      snapshot would not show the subtree that dependent has now.
 * A refused release (NULL) is classified afterwards, under the item's lock.
 */
export async function release(db: Db, caller: Caller, input: ReleaseInput): Promise<{ lease: Lease; workItem: WorkItem }> {
  const data = JSON.stringify({ evidence: input.evidence, links: input.links ?? [] });
  const [row] = await retryingConflicts(() => db.$queryRaw<{ released: { lease: LeaseRow; workItem: WorkItemRow } | null }[]>`
    SELECT release_lease(${input.leaseId}::uuid, ${input.epoch}::int, ${actingWorker(caller, input.workerId) ?? null}::text, ${data}::jsonb) AS released`);
  const released = row?.released;
  if (!released) return inTransaction(db, (tx) => refuseStaleLease(tx, caller, input.leaseId, input.epoch, input.workerId));
  countLeaseEnded(db, released.lease);
  return { lease: toLease(released.lease), workItem: toWorkItem(released.workItem) };
}

/**
 * The release_lease function release() calls, as the migration that defines it must contain it
 * (tests/database/generated-functions.test.ts; `npx tsx scripts/generated-sql.ts` prints it).
 * Built from the same fragments as every other lease ending and readiness change.
 */
export const RELEASE_LEASE_FUNCTION = `CREATE OR REPLACE FUNCTION "release_lease"("p_lease" UUID, "p_epoch" INTEGER, "p_worker" TEXT, "p_data" JSONB)
RETURNS JSON LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    "released" JSON;
    "unblocked_any" BOOLEAN;
BEGIN
    PERFORM lock_for_release("p_lease");
${staticSql(Prisma.sql`
    WITH ${lockLeaseItem(sqlParameter(`"p_lease"`))},
    ${endLeasesSql({
      from: Prisma.sql`item`,
      which: isLiveLease(sqlParameter(`"p_lease"`), sqlParameter<number>(`"p_epoch"`), sqlParameter(`coalesce("p_worker", l.worker_id)`)),
      outcome: "released",
      actor: Prisma.sql`l.worker_id`,
      data: Prisma.sql`"p_data"`,
      itemChanges: Prisma.sql`, status = 'released'`,
      thenLog: Prisma.sql`SELECT l.work_item_id, 'work_item.status_changed', l.worker_id, l.id, l.epoch,
                                 jsonb_build_object('from', 'open', 'to', 'released') || "p_data" FROM l`,
    })},
    done AS (SELECT id, parent_id, updated_at AS at FROM w),
    ${PROPAGATE_TERMINATION}
    SELECT json_build_object('lease', (SELECT row_to_json(x) FROM (SELECT ${LEASE_COLUMNS} FROM l) x),
                             'workItem', (SELECT row_to_json(x) FROM (SELECT ${WORK_ITEM_COLUMNS} FROM w) x)),
           ${HAS_UNBLOCKED}
      INTO "released", "unblocked_any"
      FROM l;`)}
    IF "unblocked_any" THEN
${staticSql(Prisma.sql`${SHIFT_BELOW_UNBLOCKED(sqlParameter(`("released"->'lease'->>'workItemId')`))};`)}
    END IF;
    RETURN "released";
END $$;`;

/**
 * Cancel: the worker gives up on the item for good. The lease ends as `cancelled` and the item
 * and its open descendants (if it gained children while leased) become `cancelled`.
 */
export async function cancel(db: Db, caller: Caller, input: CancelInput): Promise<{ lease: Lease; workItem: WorkItem }> {
  return inTransaction(db, async (tx) => {
    const { lease, item } = await lockCurrentLease(tx, caller, input.leaseId, input.epoch, input.workerId);
    const ended = await endLease(tx, lease, "cancelled", lease.workerId, { reason: input.reason });
    await cancelSubtree(tx, item, lease.workerId, { leaseId: lease.id, epoch: lease.epoch, reason: input.reason });
    return { lease: toLease(ended), workItem: (await selectWorkItem(tx, item.id))! };
  });
}
