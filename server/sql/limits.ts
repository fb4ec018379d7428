import { Prisma } from "../generated/prisma/client";
import type { Limit } from "@work-graph/contract";
import type { Db } from "../db";
import { LIVE_LEASES_ON } from "../domain/routing";
import { EVENTS_CHANNEL } from "./notifications";

/*
 * Rule 14's limits (server/domain/routing.ts). These statements lock only the key's `limits`
 * row, never an item row, so they cannot deadlock with claims (which lock the item, then the
 * key). Lowering a limit ends no lease (rule 5): claims wait until the count is below it.
 */

const toLimit = (row: Omit<Limit, "updatedAt"> & { updatedAt: Date }): Limit => ({ ...row, updatedAt: new Date(row.updatedAt).toISOString() });

/** Most limits limits.list returns. */
export const MAX_LIMITS_LISTED = 10_000;

const LIMIT_COLUMNS = Prisma.sql`k.key, k.max_leases AS "maxLeases", ${LIVE_LEASES_ON(Prisma.sql`k.key`)} AS "liveLeases", k.updated_at AS "updatedAt"`;

/**
 * Waiting claims on every instance retry once this commits (a raised or removed limit may make
 * items claimable): the commit listener treats any payload but a claim, renewal or note as
 * "claims may retry" (server/realtime/wakeups.ts).
 */
const WAKE_CLAIMS = Prisma.sql`pg_notify(${EVENTS_CHANNEL}, 'limit.changed')`;

/** Sets key `key`'s limit (creates or replaces it), one statement; waiting claims retry. */
export async function upsertLimit(db: Db, key: string, maxLeases: number): Promise<Limit> {
  const [row] = await db.$queryRaw<(Limit & { updatedAt: Date })[]>`
    WITH k AS (
      INSERT INTO limits AS k (key, max_leases, updated_at) VALUES (${key}, ${maxLeases}, work_graph_clock())
      ON CONFLICT (key) DO UPDATE SET max_leases = EXCLUDED.max_leases, updated_at = EXCLUDED.updated_at
      RETURNING k.*
    ), woken AS (SELECT ${WAKE_CLAIMS})
    SELECT ${LIMIT_COLUMNS} FROM k, woken`;
  return toLimit(row!);
}

/** Removes key `key`'s limit, if it has one; then waiting claims retry. */
export async function deleteLimit(db: Db, key: string): Promise<void> {
  await db.$queryRaw`
    WITH k AS (DELETE FROM limits WHERE key = ${key} RETURNING key), woken AS (SELECT ${WAKE_CLAIMS} FROM k)
    SELECT k.key FROM k, woken`;
}

/** Every limit, by key, with its live leases. */
export async function selectLimits(db: Db): Promise<Limit[]> {
  const rows = await db.$queryRaw<(Limit & { updatedAt: Date })[]>`
    SELECT ${LIMIT_COLUMNS} FROM limits k ORDER BY k.key COLLATE "C" LIMIT ${MAX_LIMITS_LISTED}`;
  return rows.map(toLimit);
}
