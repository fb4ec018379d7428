import { Prisma } from "../generated/prisma/client";
import { continuitySeconds } from "../config";
import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import { workerDrainSql, type WorkerDrain } from "../domain/draining";
import { NEXT_EPOCH } from "../domain/fencing";
import { CLAIMABLE, claimTiers, QUEUE_ORDER, SOME_LEASE_EXPIRED, STAGE_SQL, UNLEASED_READY_SQL } from "../domain/readiness";
import { ATTENTION_COLUMNS, LEASE_COLUMNS, WORK_ITEM_COLUMNS, type LeaseRow, type WorkItemRow, type toAttentionRequest } from "../domain/views";

/*
 * The claim statements (API.md rule 1 (claim in one transaction, SKIP LOCKED), rule 3 (fencing:
 * the epoch only grows), rule 9 (continuity), rule 10 (queue order)). A claim of the next item
 * is one autocommit statement (claimNext): one round trip on every agent's hot path.
 */

/** What a claim statement returns: the new lease, its item, and the attention under the previous lease. */
export interface ClaimRow {
  lease: LeaseRow;
  workItem: WorkItemRow;
  attention: Parameters<typeof toAttentionRequest>[0][];
}

/**
 * The lease insert shared by every claim path: rule 3 (fencing: the epoch only grows,
 * NEXT_EPOCH), times from the database clock read after the row lock was taken (a claim that
 * waited keeps its full duration), the item marked leased, continuity consumed, `lease.claimed`
 * logged. Expects a CTE `picked(id, last_epoch)` of one locked item without an unended lease;
 * CLAIM_RESULT reads the outcome.
 */
function leasePickedItem(workerId: string, durationSeconds: number): Prisma.Sql {
  return Prisma.sql`now AS (SELECT clock_timestamp() AS t),
    l AS (
      INSERT INTO leases (work_item_id, worker_id, epoch, acquired_at, expires_at)
      SELECT picked.id, ${workerId}, ${NEXT_EPOCH}, now.t, now.t + make_interval(secs => ${durationSeconds})
        FROM picked, now
      RETURNING *
    ), w AS (
      UPDATE work_items w SET current_lease_id = l.id, lease_expires_at = l.expires_at, last_epoch = l.epoch,
             continuity_worker_id = NULL, continuity_since = NULL, updated_at = l.acquired_at
        FROM l WHERE w.id = l.work_item_id
      RETURNING w.*
    ), logged AS (
      INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
      SELECT l.work_item_id, 'lease.claimed', l.worker_id, l.id, l.epoch,
             jsonb_build_object('workerId', l.worker_id, 'expiresAt', l.expires_at, 'durationSeconds', ${durationSeconds}::int)
        FROM l
    )`;
}

/** The claim result, read from the CTEs of leasePickedItem (empty when nothing was leased). */
const CLAIM_RESULT = Prisma.sql`
    (SELECT row_to_json(x) FROM (SELECT ${LEASE_COLUMNS} FROM l) x) AS lease,
    (SELECT row_to_json(x) FROM (SELECT ${WORK_ITEM_COLUMNS} FROM w) x) AS "workItem",
    (SELECT coalesce(json_agg(x ORDER BY x."createdAt", x.id), '[]') FROM (
       SELECT ${ATTENTION_COLUMNS} FROM attention_requests a JOIN leases prev ON prev.id = a.lease_id JOIN l ON true
        WHERE a.work_item_id = l.work_item_id AND prev.epoch = l.epoch - 1) x) AS attention`;

/**
 * The first claimable item in queue order (rule 10 (queue order), continuity tiers of rule 9
 * first), as SQL for an id: each tier one index-ordered probe, locked with FOR UPDATE SKIP
 * LOCKED so claimers never wait for each other's rows. The probes walk the unleased items'
 * index (UNLEASED_READY_SQL) unless an expired lease awaits its end; only the branch taken
 * runs, and so only it locks.
 */
function nextClaimableSql(workerId: string, parentId: string | undefined): Prisma.Sql {
  const underParent = parentId === undefined ? Prisma.empty : Prisma.sql`AND parent_id = ${parentId}`;
  const tiers = claimTiers(workerId, continuitySeconds());
  const firstOf = (claimable: Prisma.Sql) => Prisma.sql`COALESCE(${Prisma.join(tiers.map((tier) => Prisma.sql`
    (SELECT w.id FROM work_items w WHERE ${claimable} ${underParent} ${tier} ORDER BY ${QUEUE_ORDER} LIMIT 1 FOR UPDATE SKIP LOCKED)`))})`;
  return Prisma.sql`CASE WHEN ${SOME_LEASE_EXPIRED} THEN ${firstOf(CLAIMABLE)} ELSE ${firstOf(Prisma.raw(UNLEASED_READY_SQL))} END`;
}

/**
 * Next claim as one statement: the drain check, the first claimable item, its lease. The drain
 * check gates the rest of the statement, and claimable_worker_drain's shared advisory lock
 * lasts until the statement commits (or its transaction does). `pickedId` without a lease:
 * the item found still carries an expired, unended lease, which must be ended first (one
 * unended lease per item, even within a statement). `drained`: the worker is drained, nothing
 * was leased.
 */
export async function claimNext(
  db: Db | Tx, workerId: string, parentId: string | undefined, durationSeconds: number,
): Promise<Partial<ClaimRow> & { pickedId: string | null; drained: WorkerDrain | null }> {
  const [row] = await db.$queryRaw<(Partial<ClaimRow> & { pickedId: string | null; drained: WorkerDrain | null })[]>`
    WITH drained AS MATERIALIZED (${workerDrainSql(workerId)}),
    candidate AS (SELECT w.id, w.last_epoch, w.current_lease_id FROM work_items w
                   WHERE NOT EXISTS (SELECT 1 FROM drained) AND w.id = ${nextClaimableSql(workerId, parentId)}),
    picked AS (SELECT id, last_epoch FROM candidate WHERE current_lease_id IS NULL),
    ${leasePickedItem(workerId, durationSeconds)}
    SELECT (SELECT row_to_json(drained) FROM drained) AS drained, (SELECT id FROM candidate) AS "pickedId", ${CLAIM_RESULT}`;
  return row!;
}

/** Leases item `itemId`, which this transaction has locked and which carries no unended lease. */
export async function leaseLockedItem(tx: Tx, itemId: string, workerId: string, durationSeconds: number): Promise<ClaimRow> {
  const [row] = await tx.$queryRaw<ClaimRow[]>`
    WITH picked AS (SELECT id, last_epoch FROM work_items WHERE id = ${itemId}),
    ${leasePickedItem(workerId, durationSeconds)}
    SELECT ${CLAIM_RESULT}`;
  return row!;
}

/**
 * A named claim's lock: waits for the item's row (no SKIP) and reads its stage under the
 * lock; null when the item does not exist.
 */
export async function lockNamedItemStage(tx: Tx, id: string): Promise<string | null> {
  const [row] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM work_items WHERE id = ${id} FOR UPDATE`;
  if (!row) return null;
  const [state] = await tx.$queryRaw<{ stage: string }[]>`SELECT ${STAGE_SQL} AS stage FROM work_items w WHERE w.id = ${id}`;
  return state!.stage;
}
