import type { Db } from "../db";
import { autocommit, inTransaction } from "../database/transaction";
import { actingWorker } from "../domain/fencing";
import type { Lease, WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toLease, toWorkItem } from "../domain/views";
import { countLeaseEnded } from "../metrics";
import { leaseOutsideScope, lockCurrentLease, refuseStaleLease } from "../sql/fencing";
import { endLease, releaseIfCurrent } from "../sql/leases";
import { cancelSubtree } from "./cancel-subtree";
import { selectWorkItem } from "../sql/work-items";

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

/** A release the database did not announce (it readied nothing) is a quiet commit (server/database/transaction.ts). */
const releasedQuietly = (row: { announced: boolean } | null) => row !== null && !row.announced;

/**
 * Release: the worker finishes. The fenced lease ends as `released`, the item becomes
 * `released`, and its dependents and parent are unblocked — they are ready when it commits.
 * Only the item itself changes: open children it may have gained while leased stay open.
 *
 * It is one call of the SQL function release_lease (server/sql/leases.ts releaseIfCurrent and
 * RELEASE_LEASE_FUNCTION): a release is on every agent's hot path, so one round trip, no
 * interactive transaction. A refused release (null) is classified afterwards, under the item's lock.
 */
export async function release(db: Db, caller: Caller, input: ReleaseInput): Promise<{ lease: Lease; workItem: WorkItem }> {
  const data = JSON.stringify({ evidence: input.evidence, links: input.links ?? [] });
  const presented = { leaseId: input.leaseId, epoch: input.epoch, workerId: actingWorker(caller, input.workerId) };
  const outside = await leaseOutsideScope(db, caller, input.leaseId);
  const released = outside ? null : await autocommit(db, () => releaseIfCurrent(db, presented, data), releasedQuietly);
  if (!released) return inTransaction(db, (tx) => refuseStaleLease(tx, caller, input.leaseId, input.epoch, input.workerId));
  countLeaseEnded(db, released.lease);
  return { lease: toLease(released.lease), workItem: toWorkItem(released.workItem) };
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
