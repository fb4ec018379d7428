import { Prisma } from "../generated/prisma/client";
import { WorkGraphError } from "../errors";

/*
 * Claims and drains of one worker serialize on an advisory lock keyed by the worker id (the
 * SQL functions of migration 20261203120000_operator_control; the statements are in
 * server/sql/workers.ts): a claim either commits before a drain commits, or it sees the drain
 * and is refused. No lease is created after a drain committed.
 */

export interface WorkerDrain {
  reason: string | null;
  drainedAt: Date | string;
}

/** WORKER_DRAINED for `workerId`, drained as `drain` says. */
export function workerDrained(workerId: string, drain: WorkerDrain): WorkGraphError {
  return new WorkGraphError(
    "WORKER_DRAINED",
    `worker ${workerId} is drained${drain.reason ? ` (${drain.reason})` : ""}: finish the leases you hold, claim nothing new`,
    { workerId, reason: drain.reason, drainedAt: new Date(drain.drainedAt).toISOString() },
  );
}

/**
 * SQL of the claim side, for a claim's own statement: the worker's drain row if it is drained,
 * read after the shared advisory lock (held until the claim commits) with a snapshot of its own.
 */
export const workerDrainSql = (workerId: string) => Prisma.sql`SELECT reason, drained_at AS "drainedAt" FROM claimable_worker_drain(${workerId})`;
