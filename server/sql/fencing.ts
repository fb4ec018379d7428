import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import { inCallerScope, maySeeProject } from "../domain/scope";
import { actingWorker, LOCKED_ITEM_COLUMNS } from "../domain/fencing";
import type { Caller } from "../domain/types";
import { LEASE_COLUMNS, type LeaseRow } from "../domain/views";
import { WorkGraphError } from "../errors";
import { countFenced } from "../metrics";

export interface LockedItem {
  id: string;
  parentId: string | null;
  status: "open" | "released" | "cancelled";
  lastEpoch: number;
  priority: number;
}

export interface CurrentLease {
  lease: LeaseRow;
  item: LockedItem;
  /** The worker the call acts for: the lease's worker. */
  workerId: string;
}

/**
 * Rule 12 (projects scope tokens) for the one-statement lease writes (release, renew): whether a
 * scoped caller presents a lease on an item outside its projects. No statement for unscoped callers.
 */
export async function leaseOutsideScope(db: Db | Tx, caller: Caller, leaseId: string): Promise<boolean> {
  if (caller.projects.length === 0) return false;
  const [row] = await db.$queryRaw<{ inScope: boolean }[]>`
    SELECT ${inCallerScope(caller)} AS "inScope" FROM leases l JOIN work_items w ON w.id = l.work_item_id WHERE l.id = ${leaseId}::uuid`;
  return row !== undefined && !row.inScope;
}

/** Locks one work item row (FOR UPDATE), or returns null when it does not exist. */
export async function lockItem(tx: Tx, id: string): Promise<LockedItem | null> {
  const [item] = await tx.$queryRaw<LockedItem[]>`SELECT ${LOCKED_ITEM_COLUMNS} FROM work_items WHERE id = ${id} FOR UPDATE`;
  return item ?? null;
}

/** Who revoked a lease and why, from its `lease.ended` event. */
async function revocation(tx: Tx, workItemId: string, leaseId: string): Promise<{ reason: string | null; revokedBy: string | null }> {
  const [row] = await tx.$queryRaw<{ reason: string | null; revokedBy: string | null }[]>`
    SELECT data->>'reason' AS reason, actor AS "revokedBy" FROM events
     WHERE work_item_id = ${workItemId} AND lease_id = ${leaseId}::uuid AND type = 'lease.ended'`;
  return row ?? { reason: null, revokedBy: null };
}

/** After a fenced statement changed nothing: raise the precise refusal. */
export async function refuseStaleLease(tx: Tx, caller: Caller, leaseId: string, epoch: number, requestedWorkerId?: string): Promise<never> {
  await lockCurrentLease(tx, caller, leaseId, epoch, requestedWorkerId);
  // The fenced statement found it expired an instant ago; the classification above ran later.
  throw countFenced(tx, "expired", new WorkGraphError("LEASE_NOT_CURRENT", `lease ${leaseId} (epoch ${epoch}) has expired`, { kind: "expired", leaseId, epoch }));
}

/**
 * Rule 2 (fencing): under the work item's row lock, the presented lease id + epoch must
 * be the item's live lease — unended and expiresAt > database now, strictly. Otherwise
 * LEASE_NOT_CURRENT with detail.kind:
 *   unknown     no lease has this id and epoch
 *   superseded  a newer epoch exists on the item (someone reclaimed it)
 *   revoked     an operator ended it (leases.revoke); detail.reason and detail.revokedBy say why and who
 *   ended       the lease ended with an outcome other than expiry
 *   expired     the lease's time ran out (ended by the sweep or not yet)
 * An agent may only present its own worker's lease (FORBIDDEN otherwise).
 */
export async function lockCurrentLease(tx: Tx, caller: Caller, leaseId: string, epoch: number, requestedWorkerId?: string): Promise<CurrentLease> {
  const refuse = (kind: string, extra: Record<string, unknown> = {}) =>
    countFenced(tx, kind, new WorkGraphError("LEASE_NOT_CURRENT", `lease ${leaseId} (epoch ${epoch}) is not the item's live lease: ${kind}`, { kind, leaseId, epoch, ...extra }));

  const [owner] = await tx.$queryRaw<{ workItemId: string; workerId: string; projectId: string }[]>`
    SELECT l.work_item_id AS "workItemId", l.worker_id AS "workerId", w.project_id AS "projectId"
      FROM leases l JOIN work_items w ON w.id = l.work_item_id WHERE l.id = ${leaseId}::uuid`;
  // Rule 12 (projects scope tokens): a lease on an item outside the caller's projects is refused as if it did not exist.
  if (!owner || !maySeeProject(caller, owner.projectId)) throw refuse("unknown");
  const actingFor = actingWorker(caller, requestedWorkerId);
  if (actingFor && actingFor !== owner.workerId) {
    throw new WorkGraphError("FORBIDDEN", `lease ${leaseId} belongs to worker ${owner.workerId}, not ${actingFor}`);
  }

  const item = await lockItem(tx, owner.workItemId);
  const [state] = await tx.$queryRaw<(LeaseRow & { live: boolean })[]>`
    SELECT ${LEASE_COLUMNS}, (l.ended_at IS NULL AND l.expires_at > work_graph_now()) AS live
      FROM leases l WHERE l.id = ${leaseId}::uuid`;
  const lease = state!;
  const context = { workItemId: lease.workItemId, currentEpoch: item!.lastEpoch };
  if (lease.epoch !== epoch) throw refuse("unknown", context);
  // Revoked before superseded: the worker learns why it lost the item even after someone took it over.
  if (lease.outcome === "revoked") throw refuse("revoked", { ...context, ...(await revocation(tx, lease.workItemId, lease.id)) });
  if (item!.lastEpoch > lease.epoch) throw refuse("superseded", context);
  if (lease.outcome === "expired" || (!lease.endedAt && !state!.live)) throw refuse("expired", { ...context, expiresAt: lease.expiresAt.toISOString() });
  if (lease.endedAt) throw refuse("ended", { ...context, outcome: lease.outcome });
  return { lease, item: item!, workerId: lease.workerId };
}
