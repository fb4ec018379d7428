import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import { inTransaction, retryingConflicts, type Tx } from "../database/transaction";
import { refuseDrainedWorker, workerDrained, workerDrainSql, type WorkerDrain } from "../domain/draining";
import { endExpiredLeases } from "../domain/expiry";
import { sendRepeatedExpiriesToPerson } from "../domain/repeated-expiry";
import { CLAIMABLE, claimTiers, SOME_LEASE_EXPIRED, STAGE_SQL, UNLEASED_READY_SQL } from "../domain/readiness";
import { idempotent, idempotencyScope } from "../domain/idempotency";
import type { AttentionRequest, Caller, Lease, WorkItem } from "../domain/types";
import {
  ATTENTION_COLUMNS, LEASE_COLUMNS, WORK_ITEM_COLUMNS, toAttentionRequest, toLease, toWorkItem,
  type LeaseRow, type WorkItemRow,
} from "../domain/views";
import { notFound, WorkGraphError } from "../errors";
import { continuitySeconds } from "../config";
import { countClaim, timeClaim } from "../metrics";
import { announceLocally } from "../realtime/wakeups";

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

/**
 * The lease insert shared by every claim path: epoch = highest epoch + 1 (rule 3), times from
 * the database clock read after the row lock was taken (a claim that waited keeps its full
 * duration), the item marked leased, continuity consumed, `lease.claimed` logged. Expects a
 * CTE `picked(id, last_epoch)` of one locked item without an unended lease; CLAIM_RESULT reads
 * the outcome.
 */
function leasePickedItem(workerId: string, durationSeconds: number): Prisma.Sql {
  return Prisma.sql`now AS (SELECT clock_timestamp() AS t),
    l AS (
      INSERT INTO leases (work_item_id, worker_id, epoch, acquired_at, expires_at)
      SELECT picked.id, ${workerId}, picked.last_epoch + 1, now.t, now.t + make_interval(secs => ${durationSeconds})
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

interface ClaimRow {
  lease: LeaseRow;
  workItem: WorkItemRow;
  attention: Parameters<typeof toAttentionRequest>[0][];
}

function toClaimResult(row: ClaimRow): ClaimResult {
  const lease = toLease(row.lease);
  return {
    lease,
    workItem: { ...toWorkItem(row.workItem), stage: "leased", currentLease: lease },
    attention: row.attention.map(toAttentionRequest),
  };
}

/**
 * Leases an item this transaction has locked: ends an expired lease on it first (rule 7).
 * Null when that expiry sent the item to a person instead (rule 11).
 */
async function leaseLockedItem(tx: Tx, itemId: string, workerId: string, durationSeconds: number): Promise<ClaimResult | null> {
  const expired = await endExpiredLeases(tx, [itemId]);
  if ((await sendRepeatedExpiriesToPerson(tx, expired.map((lease) => lease.workItemId))).length > 0) return null;
  const [row] = await tx.$queryRaw<ClaimRow[]>`
    WITH picked AS (SELECT id, last_epoch FROM work_items WHERE id = ${itemId}),
    ${leasePickedItem(workerId, durationSeconds)}
    SELECT ${CLAIM_RESULT}`;
  return countClaim(tx, toClaimResult(row!));
}

/**
 * The first claimable item in queue order (continuity tiers first), as SQL for an id: each tier
 * one index-ordered probe, locked with FOR UPDATE SKIP LOCKED so claimers never wait for each
 * other's rows. The probes walk the unleased items' index (UNLEASED_READY_SQL) unless an expired
 * lease awaits its end; only the branch taken runs, and so only it locks.
 */
function nextClaimableSql(workerId: string, parentId: string | undefined): Prisma.Sql {
  const underParent = parentId === undefined ? Prisma.empty : Prisma.sql`AND parent_id = ${parentId}`;
  const tiers = claimTiers(workerId, continuitySeconds());
  const firstOf = (claimable: Prisma.Sql) => Prisma.sql`COALESCE(${Prisma.join(tiers.map((tier) => Prisma.sql`
    (SELECT id FROM work_items WHERE ${claimable} ${underParent} ${tier} ORDER BY priority DESC, created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)`))})`;
  return Prisma.sql`CASE WHEN ${SOME_LEASE_EXPIRED} THEN ${firstOf(CLAIMABLE)} ELSE ${firstOf(Prisma.raw(UNLEASED_READY_SQL))} END`;
}

/**
 * Next claim as one statement: the drain check, the first claimable item, its lease. The drain
 * check gates the rest of the statement, and claimable_worker_drain's shared advisory lock
 * lasts until the statement commits (or its transaction does). `pickedId` without `claimed`:
 * the item found still carries an expired, unended lease, which must be ended first (one
 * unended lease per item, even within a statement).
 */
async function leaseNextClaimable(
  db: Db | Tx, workerId: string, parentId: string | undefined, durationSeconds: number,
): Promise<{ pickedId: string | null; claimed: ClaimResult | null }> {
  const [row] = await db.$queryRaw<(Partial<ClaimRow> & { pickedId: string | null; drained: WorkerDrain | null })[]>`
    WITH drained AS MATERIALIZED (${workerDrainSql(workerId)}),
    candidate AS (SELECT w.id, w.last_epoch, w.current_lease_id FROM work_items w
                   WHERE NOT EXISTS (SELECT 1 FROM drained) AND w.id = ${nextClaimableSql(workerId, parentId)}),
    picked AS (SELECT id, last_epoch FROM candidate WHERE current_lease_id IS NULL),
    ${leasePickedItem(workerId, durationSeconds)}
    SELECT (SELECT row_to_json(drained) FROM drained) AS drained, (SELECT id FROM candidate) AS "pickedId", ${CLAIM_RESULT}`;
  if (row!.drained) throw workerDrained(workerId, row!.drained);
  return { pickedId: row!.pickedId, claimed: row!.lease ? countClaim(db, toClaimResult(row as ClaimRow)) : null };
}

/**
 * Next claim in a transaction (an idempotency key, or an expired lease to end first). An item
 * sent to a person on the way is no longer claimable, so the next probe skips it.
 */
async function claimNext(tx: Tx, workerId: string, parentId: string | undefined, durationSeconds: number): Promise<ClaimResult | null> {
  const { pickedId, claimed } = await leaseNextClaimable(tx, workerId, parentId, durationSeconds);
  if (!pickedId || claimed) return claimed;
  return (await leaseLockedItem(tx, pickedId, workerId, durationSeconds)) ?? claimNext(tx, workerId, parentId, durationSeconds);
}

/**
 * Named claim: wait for the row (no SKIP), re-check readiness under the lock, lease it. Null
 * when recording the item's expired lease sent it to a person (rule 11): that is committed,
 * and `claim` refuses afterwards.
 */
export async function claimNamedItem(tx: Tx, id: string, workerId: string, durationSeconds: number): Promise<ClaimResult | null> {
  await refuseDrainedWorker(tx, workerId);
  const [row] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM work_items WHERE id = ${id} FOR UPDATE`;
  if (!row) throw notFound("work item", id);
  const [state] = await tx.$queryRaw<{ stage: string }[]>`SELECT ${STAGE_SQL} AS stage FROM work_items w WHERE w.id = ${id}`;
  if (state!.stage !== "ready") {
    throw new WorkGraphError("NOT_CLAIMABLE", `work item ${id} is not ready: it is ${state!.stage}`, { stage: state!.stage, workItemId: id });
  }
  return leaseLockedItem(tx, id, workerId, durationSeconds);
}

export async function claim(db: Db, caller: Caller, workerId: string, input: ClaimInput): Promise<ClaimResult | null> {
  const claimed = await timeClaim(async () => {
    // The common claim — the next item, no idempotency key — as one autocommit statement: one
    // round trip on every agent's hot path. Only an expired lease to end first takes the transaction.
    if (input.workItemId === undefined && input.idempotencyKey === undefined) {
      const { pickedId, claimed } = await retryingConflicts(() => leaseNextClaimable(db, workerId, input.parentId, input.durationSeconds));
      if (!pickedId || claimed) return claimed;
    }
    return inTransaction(db, (tx) =>
      idempotent(tx, idempotencyScope(caller, workerId), input.idempotencyKey, "leases.claim", input, () =>
        input.workItemId !== undefined
          ? claimNamedItem(tx, input.workItemId, workerId, input.durationSeconds)
          : claimNext(tx, workerId, input.parentId, input.durationSeconds),
        (result) => result !== null,
      ),
    );
  });
  if (claimed) announceLocally(db, ["lease.claimed"]);
  if (!claimed && input.workItemId !== undefined) {
    throw new WorkGraphError("NOT_CLAIMABLE", `work item ${input.workItemId} is not ready: its leases kept expiring, so it waits for a person`, {
      stage: "needs_attention",
      workItemId: input.workItemId,
    });
  }
  return claimed;
}

