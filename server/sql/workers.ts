import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import { workerDrained, workerDrainSql, type WorkerDrain } from "../domain/draining";
import { itemInProjects } from "../domain/scope";
import { actorNameOf } from "../domain/views";

/* Workers (rows derived from leases, drains and agent tokens) and their drains (server/domain/draining.ts says how claims and drains serialize). */

/** The drain side: waits for the worker's claims in flight and holds them off until commit. */
export async function lockWorkerForDrain(tx: Tx, workerId: string): Promise<void> {
  await tx.$executeRaw`SELECT lock_worker_for_drain(${workerId})`;
}

/** Every claim path but the one-statement next claim calls this first: WORKER_DRAINED when an operator drained the worker. */
export async function refuseDrainedWorker(tx: Tx, workerId: string): Promise<void> {
  const [drained] = await tx.$queryRaw<WorkerDrain[]>`${workerDrainSql(workerId)}`;
  if (drained) throw workerDrained(workerId, drained);
}

/** Drains the worker (again: the reason changes, the drain time stays), recorded as changed by `actor`. */
export async function upsertDrain(tx: Tx, workerId: string, reason: string | null, actor: string): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO worker_drains (worker_id, drained_at, reason, changed_by)
    VALUES (${workerId}, work_graph_clock(), ${reason}, ${actor})
    ON CONFLICT (worker_id) DO UPDATE
      SET drained_at = COALESCE(worker_drains.drained_at, EXCLUDED.drained_at), reason = EXCLUDED.reason,
          changed_by = EXCLUDED.changed_by, changed_at = work_graph_clock()`;
}

/** Ends the worker's drain, if it has one, recorded as changed by `actor`. */
export async function endDrain(tx: Tx, workerId: string, actor: string): Promise<void> {
  await tx.$executeRaw`
    UPDATE worker_drains SET drained_at = NULL, reason = NULL, changed_by = ${actor}, changed_at = work_graph_clock()
     WHERE worker_id = ${workerId} AND drained_at IS NOT NULL`;
}

export interface WorkerRow {
  workerId: string;
  liveLeases: number;
  drainedAt: Date | null;
  drainReason: string | null;
  drainedBy: string | null;
  drainedByName: string | null;
  lastSeenAt: Date | null;
  claimed: number;
  released: number;
  expired: number;
  revoked: number;
  capabilities: string[];
}

/**
 * Every worker seen (or only `only`), most recently seen first, at most `limit` (queries/workers.ts listWorkers says what counts).
 * For a caller scoped to `projects` (rule 12 (projects scope tokens)), the lease counts and last-seen time only count its projects' items.
 */
export async function selectWorkers(db: Db | Tx, only: string | undefined, limit: number, projects: string[] = []): Promise<WorkerRow[]> {
  const leaseInScope = itemInProjects(projects, Prisma.raw("l.work_item_id"));
  const eventInScope = itemInProjects(projects, Prisma.raw("e.work_item_id"));
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
  return db.$queryRaw<WorkerRow[]>`
    SELECT k.worker_id AS "workerId", d.drained_at AS "drainedAt", d.reason AS "drainReason",
           CASE WHEN d.drained_at IS NOT NULL THEN d.changed_by END AS "drainedBy",
           CASE WHEN d.drained_at IS NOT NULL THEN ${actorNameOf(Prisma.sql`d.changed_by`)} END AS "drainedByName",
           (SELECT count(*)::int FROM leases l
             WHERE l.worker_id = k.worker_id AND l.ended_at IS NULL AND l.expires_at > work_graph_now() ${leaseInScope}) AS "liveLeases",
           (SELECT e.created_at FROM events e WHERE e.actor = k.worker_id ${eventInScope} ORDER BY e.sequence DESC LIMIT 1) AS "lastSeenAt",
           (SELECT count(*)::int FROM leases l
             WHERE l.worker_id = k.worker_id AND l.acquired_at > work_graph_now() - interval '1 hour' ${leaseInScope}) AS claimed,
           ended.released, ended.expired, ended.revoked,
           ARRAY(SELECT DISTINCT c FROM api_tokens t, unnest(t.capabilities) c
                  WHERE t.worker_id = k.worker_id AND t.role = 'agent' AND t.revoked_at IS NULL ORDER BY c) AS capabilities
      FROM (${known}) k
      LEFT JOIN worker_drains d ON d.worker_id = k.worker_id
      CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE l.outcome = 'released')::int AS released,
               count(*) FILTER (WHERE l.outcome = 'expired')::int AS expired,
               count(*) FILTER (WHERE l.outcome = 'revoked')::int AS revoked
          FROM leases l WHERE l.worker_id = k.worker_id AND l.ended_at > work_graph_now() - interval '1 hour' ${leaseInScope}
      ) ended
     ORDER BY "lastSeenAt" DESC NULLS LAST, "workerId"
     LIMIT ${limit}`;
}
