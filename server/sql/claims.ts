import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import { queryHotPath } from "./hot-path";
import type { Tx } from "../database/transaction";
import type { WorkItem } from "@work-graph/contract";
import { workerDrainSql, type WorkerDrain } from "../domain/draining";
import { NEXT_EPOCH } from "../domain/fencing";
import { inProjects } from "../domain/scope";
import { CLAIMABLE, claimTiers, QUEUE_ORDER, SOME_LEASE_EXPIRED, STAGE_SQL, UNLEASED_READY_SQL } from "../domain/readiness";
import { CAPABLE, KEY_LIMITED, LIVE_LEASES_ON, ROUTED, type Routing } from "../domain/routing";
import { selectWorkItems } from "./work-items";
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
 * logged, the item's concurrency key recorded on the lease (rule 14). Expects a CTE
 * `picked(id, last_epoch, concurrency_key)` of one locked item without an unended lease;
 * CLAIM_RESULT reads the outcome.
 */
function leasePickedItem(workerId: string, durationSeconds: number): Prisma.Sql {
  return Prisma.sql`now AS (SELECT work_graph_clock() AS t),
    l AS (
      INSERT INTO leases (work_item_id, worker_id, epoch, acquired_at, expires_at, concurrency_key)
      SELECT picked.id, ${workerId}, ${NEXT_EPOCH}, now.t, now.t + make_interval(secs => ${durationSeconds}), picked.concurrency_key
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
 * first) that `routing` may take (server/domain/routing.ts), passing over items whose key is
 * in `passOverKeys`, as SQL for an id: each tier one index-ordered probe, locked with FOR UPDATE SKIP
 * LOCKED so claimers never wait for each other's rows. The probes walk the unleased items'
 * index (UNLEASED_READY_SQL) unless an expired lease awaits its end; only the branch taken
 * runs, and so only it locks.
 */
function nextClaimableSql(workerId: string, parentId: string | undefined, routing: Routing, passOverKeys: string[], continuitySeconds: number): Prisma.Sql {
  const underParent = parentId === undefined ? Prisma.empty : Prisma.sql`AND parent_id = ${parentId}`;
  const passedOver = passOverKeys.length === 0 ? Prisma.empty
    : Prisma.sql`AND (w.concurrency_key IS NULL OR w.concurrency_key <> ALL(${passOverKeys}::text[]))`;
  const tiers = claimTiers(workerId, continuitySeconds);
  const firstOf = (claimable: Prisma.Sql) => Prisma.sql`COALESCE(${Prisma.join(tiers.map((tier) => Prisma.sql`
    (SELECT w.id FROM work_items w WHERE ${claimable} ${underParent} AND ${ROUTED(routing)} ${passedOver} ${tier} ORDER BY ${QUEUE_ORDER} LIMIT 1 FOR UPDATE SKIP LOCKED)`))})`;
  return Prisma.sql`CASE WHEN ${SOME_LEASE_EXPIRED} THEN ${firstOf(CLAIMABLE)} ELSE ${firstOf(Prisma.raw(UNLEASED_READY_SQL))} END`;
}

/** What claimNext found: see there. */
export type NextClaimRow = Partial<ClaimRow> & { pickedId: string | null; limitedKey: string | null; drained: WorkerDrain | null };

/**
 * Next claim as one statement: the drain check, the first claimable item `routing` may take,
 * its lease. The drain check gates the rest of the statement, and claimable_worker_drain's
 * shared advisory lock lasts until the statement commits (or its transaction does). `pickedId`
 * without a lease: the item found still carries an expired, unended lease, which must be ended
 * first (one unended lease per item, even within a statement), or its concurrency key has a
 * limit (`limitedKey`), which only a transaction may check (server/domain/routing.ts). Items
 * without a limited key are leased here, in this one statement. `drained`: the worker is
 * drained, nothing was leased.
 */
export async function claimNext(
  db: Db | Tx, workerId: string, parentId: string | undefined, durationSeconds: number, routing: Routing, passOverKeys: string[], continuitySeconds: number,
): Promise<NextClaimRow> {
  const [row] = await queryHotPath<NextClaimRow>(db, Prisma.sql`
    WITH drained AS MATERIALIZED (${workerDrainSql(workerId)}),
    candidate AS (SELECT w.id, w.last_epoch, w.current_lease_id, w.concurrency_key,
                         CASE WHEN ${KEY_LIMITED} THEN w.concurrency_key END AS limited_key
                    FROM work_items w
                   WHERE NOT EXISTS (SELECT 1 FROM drained) AND w.id = ${nextClaimableSql(workerId, parentId, routing, passOverKeys, continuitySeconds)}),
    picked AS (SELECT id, last_epoch, concurrency_key FROM candidate WHERE current_lease_id IS NULL AND limited_key IS NULL),
    ${leasePickedItem(workerId, durationSeconds)}
    SELECT (SELECT row_to_json(drained) FROM drained) AS drained, (SELECT id FROM candidate) AS "pickedId",
           (SELECT limited_key FROM candidate) AS "limitedKey", ${CLAIM_RESULT}`);
  return row!;
}

/** Leases item `itemId`, which this transaction has locked and which carries no unended lease. */
export async function leaseLockedItem(tx: Tx, itemId: string, workerId: string, durationSeconds: number): Promise<ClaimRow> {
  const [row] = await tx.$queryRaw<ClaimRow[]>`
    WITH picked AS (SELECT id, last_epoch, concurrency_key FROM work_items WHERE id = ${itemId}),
    ${leasePickedItem(workerId, durationSeconds)}
    SELECT ${CLAIM_RESULT}`;
  return row!;
}

/** What a named claim must know of its item, read under its row lock. */
export interface NamedItemState {
  stage: string;
  requires: string[];
  concurrencyKey: string | null;
  notBefore: Date | null;
}

/**
 * A named claim's lock: waits for the item's row (no SKIP) and reads its stage under the
 * lock; null when the item does not exist or lies outside `routing`'s projects (rule 12: not
 * revealed).
 */
export async function lockNamedItemState(tx: Tx, id: string, routing: Routing): Promise<NamedItemState | null> {
  const [row] = await tx.$queryRaw<{ id: string }[]>`
    SELECT w.id FROM work_items w WHERE w.id = ${id} AND ${inProjects(routing, routing.projectId)} FOR UPDATE`;
  if (!row) return null;
  const [state] = await tx.$queryRaw<NamedItemState[]>`
    SELECT ${STAGE_SQL} AS stage, w.requires, w.concurrency_key AS "concurrencyKey", w.not_before AS "notBefore"
      FROM work_items w WHERE w.id = ${id}`;
  return state!;
}

/** A concurrency key's limit and live leases, as rule 14 decides a claim by them. */
export interface KeyRoom {
  key: string;
  maxLeases: number;
  liveLeases: number;
}

/**
 * Rule 14, steps (b) and (c) of server/domain/routing.ts: locks key `key`'s limit row (the
 * caller already holds the item's row lock), then counts its live leases in a statement of its
 * own, whose snapshot is taken after the lock was granted and so includes every lease a
 * claimer that held the lock before us committed. Null when the key has no limit.
 */
export async function lockKeyAndCountLiveLeases(tx: Tx, key: string): Promise<KeyRoom | null> {
  const [limit] = await tx.$queryRaw<{ maxLeases: number }[]>`SELECT max_leases AS "maxLeases" FROM limits WHERE key = ${key} FOR UPDATE`;
  if (!limit) return null;
  const [count] = await tx.$queryRaw<{ liveLeases: number }[]>`SELECT ${LIVE_LEASES_ON(Prisma.sql`${key}::text`)} AS "liveLeases"`;
  return { key, maxLeases: limit.maxLeases, liveLeases: count!.liveLeases };
}

/** Marks a point a next claim may roll back to, releasing the row locks taken after it (a full key's item and key row). */
export async function markClaimProbe(tx: Tx): Promise<void> {
  await tx.$executeRaw`SAVEPOINT claim_probe`;
}

export async function rollBackClaimProbe(tx: Tx): Promise<void> {
  await tx.$executeRaw`ROLLBACK TO SAVEPOINT claim_probe`;
}

/** Rule 13's default for an admin claiming for a worker: the union of that worker's unrevoked agent tokens' capabilities. */
export async function workerCapabilities(db: Db, workerId: string): Promise<string[]> {
  const [row] = await db.$queryRaw<{ capabilities: string[] }[]>`
    SELECT coalesce(array_agg(DISTINCT c ORDER BY c), '{}') AS capabilities
      FROM api_tokens t CROSS JOIN LATERAL unnest(t.capabilities) c
     WHERE t.role = 'agent' AND t.worker_id = ${workerId} AND t.revoked_at IS NULL`;
  return row?.capabilities ?? [];
}

/** Waiting claims' routings looked at one by one for rule 15's timer; beyond that, any gated item counts. */
const MAX_GATE_ROUTINGS = 32;

/**
 * Rule 15's wake-up: milliseconds (database clock) until the soonest time gate of an open item
 * one of `routings` could take opens (its project scope and capabilities), through
 * work_items_not_before_idx; null when no such gate lies ahead.
 */
export async function msUntilSoonestTimeGate(db: Db, routings: Routing[]): Promise<number | null> {
  if (routings.length === 0) return null;
  const takers = routings.length > MAX_GATE_ROUTINGS
    ? Prisma.sql`true`
    : Prisma.join(routings.map((routing) => Prisma.sql`(${inProjects(routing, routing.projectId)} AND ${CAPABLE(routing.capabilities)})`), " OR ");
  const [row] = await db.$queryRaw<{ ms: number | null }[]>`
    SELECT (extract(epoch FROM min(w.not_before) - work_graph_clock()) * 1000)::float8 AS ms
      FROM work_items w WHERE w.not_before > work_graph_now() AND w.status = 'open' AND (${takers})`;
  return row?.ms ?? null;
}

/**
 * Up to `limit` items of one continuity tier that a next claim routed by `routing` could take,
 * in queue order (workItems.queue): the claim's own filters (rules 10, 12–15).
 */
export const selectRoutedQueueTier = (db: Db, tier: Prisma.Sql, routing: Routing, limit: number): Promise<WorkItem[]> =>
  selectWorkItems(db, Prisma.sql`${CLAIMABLE} AND ${ROUTED(routing)} ${tier}`, QUEUE_ORDER, limit);
