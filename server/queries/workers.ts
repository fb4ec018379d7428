import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import { LEASE_OUTCOMES, type LeaseOutcome } from "../domain/types";

export interface Worker {
  workerId: string;
  liveLeases: number;
  drained: boolean;
  drainReason: string | null;
  lastSeenAt: string | null;
  lastHour: { claimed: number; released: number; expired: number; revoked: number };
}

/** workers.list answers at most this many workers (the most recently seen). */
export const WORKERS_LIMIT = 1000;

interface WorkerRow {
  workerId: string;
  liveLeases: number;
  drainedAt: Date | null;
  drainReason: string | null;
  lastSeenAt: Date | null;
  claimed: number;
  released: number;
  expired: number;
  revoked: number;
}

/**
 * Every worker seen: each worker id that ever held a lease, was drained, or has an active
 * agent token. All derived from existing rows through indexes, nothing written per request:
 * lease workers by a loose index scan, last seen = the worker's latest event (it is the actor
 * of its claims, renewals, notes, finishes and attention requests), last-hour counts from
 * leases by (worker_id, acquired_at) and (worker_id, ended_at).
 */
export async function listWorkers(db: Db | Tx, only?: string): Promise<Worker[]> {
  const known = only !== undefined
    ? Prisma.sql`SELECT ${only}::text AS worker_id`
    : Prisma.sql`
      WITH RECURSIVE lease_workers(worker_id) AS (
        (SELECT worker_id FROM leases ORDER BY worker_id LIMIT 1)
        UNION ALL
        SELECT (SELECT l.worker_id FROM leases l WHERE l.worker_id > lw.worker_id ORDER BY l.worker_id LIMIT 1)
          FROM lease_workers lw WHERE lw.worker_id IS NOT NULL
      )
      SELECT worker_id FROM lease_workers WHERE worker_id IS NOT NULL
      UNION SELECT worker_id FROM worker_drains
      UNION SELECT worker_id FROM api_tokens WHERE role = 'agent' AND revoked_at IS NULL`;
  const rows = await db.$queryRaw<WorkerRow[]>`
    SELECT k.worker_id AS "workerId", d.drained_at AS "drainedAt", d.reason AS "drainReason",
           (SELECT count(*)::int FROM leases l
             WHERE l.worker_id = k.worker_id AND l.ended_at IS NULL AND l.expires_at > statement_timestamp()) AS "liveLeases",
           (SELECT e.created_at FROM events e WHERE e.actor = k.worker_id ORDER BY e.sequence DESC LIMIT 1) AS "lastSeenAt",
           (SELECT count(*)::int FROM leases l
             WHERE l.worker_id = k.worker_id AND l.acquired_at > statement_timestamp() - interval '1 hour') AS claimed,
           ended.released, ended.expired, ended.revoked
      FROM (${known}) k
      LEFT JOIN worker_drains d ON d.worker_id = k.worker_id
      CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE l.outcome = 'released')::int AS released,
               count(*) FILTER (WHERE l.outcome = 'expired')::int AS expired,
               count(*) FILTER (WHERE l.outcome = 'revoked')::int AS revoked
          FROM leases l WHERE l.worker_id = k.worker_id AND l.ended_at > statement_timestamp() - interval '1 hour'
      ) ended
     ORDER BY "lastSeenAt" DESC NULLS LAST, "workerId"
     LIMIT ${WORKERS_LIMIT}`;
  return rows.map((row) => ({
    workerId: row.workerId,
    liveLeases: Number(row.liveLeases),
    drained: row.drainedAt !== null,
    drainReason: row.drainReason,
    lastSeenAt: row.lastSeenAt ? row.lastSeenAt.toISOString() : null,
    lastHour: { claimed: Number(row.claimed), released: Number(row.released), expired: Number(row.expired), revoked: Number(row.revoked) },
  }));
}

/** Dashboard: leases ended in the last hour, per outcome (revoked apart from expired). */
export async function endedLastHour(db: Db): Promise<Record<LeaseOutcome, number>> {
  const rows = await db.$queryRaw<{ outcome: LeaseOutcome; n: number }[]>`
    SELECT outcome, count(*)::int AS n FROM leases WHERE ended_at > statement_timestamp() - interval '1 hour' GROUP BY outcome`;
  const counts = Object.fromEntries(LEASE_OUTCOMES.map((outcome) => [outcome, 0])) as Record<LeaseOutcome, number>;
  for (const row of rows) counts[row.outcome] = Number(row.n);
  return counts;
}
