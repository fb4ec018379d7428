import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import { inTransaction, type Tx } from "../database/transaction";
import { endExpiredLeases } from "../domain/expiry";
import { idempotent, idempotencyScope } from "../domain/idempotency";
import type { AttentionRequest, Caller, Lease, WorkItem } from "../domain/types";
import { ATTENTION_COLUMNS, LEASE_COLUMNS, STAGE_SQL, selectWorkItem, toAttentionRequest, toLease, type LeaseRow } from "../domain/views";
import { notFound, WorkGraphError } from "../errors";
import { continuitySeconds } from "../config";

export interface ClaimInput {
  workItemId?: string;
  parentId?: string;
  durationSeconds: number;
  idempotencyKey?: string;
}

export interface ClaimResult {
  lease: Lease;
  workItem: WorkItem;
  /** Attention requests raised under the item's previous lease, with their answers, for the resuming worker. */
  attention: AttentionRequest[];
}

/** Structurally ready (the partial claim index) and not held by a live lease. */
export const CLAIMABLE = Prisma.sql`status = 'open' AND open_dependency_count = 0 AND ancestor_dependency_count = 0
  AND open_child_count = 0 AND blocking_attention_count = 0
  AND (lease_expires_at IS NULL OR lease_expires_at <= statement_timestamp())`;

/**
 * Continuity (rule 9): for `window` seconds after an item's last blocking attention request
 * was resolved, its previous worker takes it ahead of other ready items and everyone else
 * only after them. Each tier is one index-ordered probe with SKIP LOCKED, so claimers never
 * wait for each other's rows.
 */
export function claimTiers(workerId: string, window: number): Prisma.Sql[] {
  if (window <= 0) return [Prisma.empty];
  const held = Prisma.sql`continuity_worker_id IS NOT NULL AND continuity_since > statement_timestamp() - make_interval(secs => ${window})`;
  return [
    Prisma.sql`AND ${held} AND continuity_worker_id = ${workerId}`,
    Prisma.sql`AND NOT (${held} AND continuity_worker_id <> ${workerId})`,
    Prisma.sql`AND ${held} AND continuity_worker_id <> ${workerId}`,
  ];
}

async function lockNextClaimable(tx: Tx, workerId: string, parentId: string | undefined): Promise<string | null> {
  const underParent = parentId === undefined ? Prisma.empty : Prisma.sql`AND parent_id = ${parentId}`;
  for (const tier of claimTiers(workerId, continuitySeconds())) {
    const [row] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM work_items
       WHERE ${CLAIMABLE} ${underParent} ${tier}
       ORDER BY priority DESC, created_at, id
       LIMIT 1
         FOR UPDATE SKIP LOCKED`;
    if (row) return row.id;
  }
  return null;
}

/** Named claim: wait for the row (no SKIP), then re-check readiness under the lock. */
async function lockNamed(tx: Tx, id: string): Promise<void> {
  const [row] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM work_items WHERE id = ${id} FOR UPDATE`;
  if (!row) throw notFound("work item", id);
  const [state] = await tx.$queryRaw<{ stage: string }[]>`SELECT ${STAGE_SQL} AS stage FROM work_items w WHERE w.id = ${id}`;
  if (state!.stage !== "ready") {
    throw new WorkGraphError("NOT_CLAIMABLE", `work item ${id} is not ready: it is ${state!.stage}`, { stage: state!.stage, workItemId: id });
  }
}

/** Claim of a named item: lock it (waiting if needed), require it ready, lease it. */
export async function claimNamedItem(tx: Tx, id: string, workerId: string, durationSeconds: number): Promise<LeaseRow> {
  await lockNamed(tx, id);
  return leaseLockedItem(tx, id, workerId, durationSeconds);
}

/**
 * Creates the lease on a locked, claimable item: epoch = highest epoch + 1 (rule 3), times
 * from the database clock after the lock was taken, so a claim that waited keeps its full
 * duration. An expired unended lease is ended first (rule 7).
 */
export async function leaseLockedItem(tx: Tx, itemId: string, workerId: string, durationSeconds: number): Promise<LeaseRow> {
  await endExpiredLeases(tx, [itemId]);
  const [lease] = await tx.$queryRaw<LeaseRow[]>`
    WITH now AS (SELECT clock_timestamp() AS t),
    l AS (
      INSERT INTO leases (work_item_id, worker_id, epoch, acquired_at, expires_at)
      SELECT w.id, ${workerId}, w.last_epoch + 1, now.t, now.t + make_interval(secs => ${durationSeconds})
        FROM work_items w, now WHERE w.id = ${itemId}
      RETURNING *
    ), item AS (
      UPDATE work_items w SET current_lease_id = l.id, lease_expires_at = l.expires_at, last_epoch = l.epoch,
             continuity_worker_id = NULL, continuity_since = NULL, updated_at = l.acquired_at
        FROM l WHERE w.id = l.work_item_id
    ), logged AS (
      INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
      SELECT l.work_item_id, 'lease.claimed', l.worker_id, l.id, l.epoch,
             jsonb_build_object('workerId', l.worker_id, 'expiresAt', l.expires_at, 'durationSeconds', ${durationSeconds}::int)
        FROM l
    )
    SELECT ${LEASE_COLUMNS} FROM l`;
  return lease!;
}

async function previousLeaseAttention(tx: Tx, itemId: string, epoch: number): Promise<AttentionRequest[]> {
  const rows = await tx.$queryRaw<Parameters<typeof toAttentionRequest>[0][]>`
    SELECT ${ATTENTION_COLUMNS} FROM attention_requests a JOIN leases l ON l.id = a.lease_id
     WHERE a.work_item_id = ${itemId} AND l.epoch = ${epoch - 1} ORDER BY a.created_at, a.id`;
  return rows.map(toAttentionRequest);
}

export async function claim(db: Db, caller: Caller, workerId: string, input: ClaimInput): Promise<ClaimResult | null> {
  return inTransaction(db, (tx) =>
    idempotent(tx, idempotencyScope(caller, workerId), input.idempotencyKey, "leases.claim", input, async () => {
      let itemId: string | null;
      let lease: LeaseRow;
      if (input.workItemId !== undefined) {
        itemId = input.workItemId;
        lease = await claimNamedItem(tx, itemId, workerId, input.durationSeconds);
      } else {
        itemId = await lockNextClaimable(tx, workerId, input.parentId);
        if (itemId === null) return null;
        lease = await leaseLockedItem(tx, itemId, workerId, input.durationSeconds);
      }
      return {
        lease: toLease(lease),
        workItem: (await selectWorkItem(tx, itemId))!,
        attention: await previousLeaseAttention(tx, itemId, lease.epoch),
      };
    }),
  );
}

