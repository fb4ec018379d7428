import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { actingWorker, isLiveLease, lockCurrentLease, lockLeaseItem, refuseStaleLease } from "../domain/fencing";
import { HAS_UNBLOCKED, PROPAGATE_TERMINATION, shiftBelowUnblocked } from "../domain/readiness";
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
 * Release: the worker finishes. In one statement, under the item's row lock: the fenced lease
 * ends as `released`, the item becomes `released`, and its dependents and parent are
 * unblocked — they are ready when this transaction commits. Only the item itself changes:
 * open children it may have gained while leased stay open.
 */
export async function release(db: Db, caller: Caller, input: ReleaseInput): Promise<{ lease: Lease; workItem: WorkItem }> {
  return inTransaction(db, async (tx) => {
    const data = JSON.stringify({ evidence: input.evidence, links: input.links ?? [] });
    // The item's row lock, then its dependents' in id order (the global lock order: two releases
    // with shared dependents would otherwise update them in join order and could deadlock), each
    // taken by a statement of its own inside lock_for_release (migration 20261203160000): a
    // statement reads every other table as of its start, so had the fused statement below waited
    // for the item (a new dependency on it holds it FOR SHARE until it commits), it would miss
    // that committed edge and leave the dependent blocked by a released item for good.
    await tx.$executeRaw`SELECT lock_for_release(${input.leaseId}::uuid)`;
    const [row] = await tx.$queryRaw<{ lease: LeaseRow; workItem: WorkItemRow; dependents: boolean }[]>`
      WITH ${lockLeaseItem(input.leaseId)},
      ${endLeasesSql({
        from: Prisma.sql`item`,
        which: isLiveLease(input.leaseId, input.epoch, actingWorker(caller, input.workerId)),
        outcome: "released",
        actor: Prisma.sql`l.worker_id`,
        data: Prisma.sql`${data}::jsonb`,
        itemChanges: Prisma.sql`, status = 'released'`,
        thenLog: Prisma.sql`SELECT l.work_item_id, 'work_item.status_changed', l.worker_id, l.id, l.epoch,
                                   jsonb_build_object('from', 'open', 'to', 'released') || ${data}::jsonb FROM l`,
      })},
      done AS (SELECT id, parent_id, updated_at AS at FROM w),
      ${PROPAGATE_TERMINATION}
      SELECT (SELECT row_to_json(x) FROM (SELECT ${LEASE_COLUMNS} FROM l) x) AS lease,
             (SELECT row_to_json(x) FROM (SELECT ${WORK_ITEM_COLUMNS} FROM w) x) AS "workItem",
             ${HAS_UNBLOCKED} AS dependents
        FROM l`;
    if (!row) return refuseStaleLease(tx, caller, input.leaseId, input.epoch, input.workerId);
    countLeaseEnded(tx, row.lease);
    // In its own statement: had the one above waited for a dependent's row (a move or a new
    // child under it), its snapshot would not show the subtree that dependent has now.
    if (row.dependents) await shiftBelowUnblocked(tx, row.lease.workItemId);
    return { lease: toLease(row.lease), workItem: toWorkItem(row.workItem) };
  });
}

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
