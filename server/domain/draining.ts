import type { Tx } from "../database/transaction";
import { WorkGraphError } from "../errors";

/**
 * Claims and drains of one worker serialize on a transaction-scoped advisory lock keyed by
 * the worker id (a row lock would not do: the worker may have no worker_drains row yet).
 * A claim holds it shared from before it reads the drain state until it commits; a drain takes
 * it exclusively. So a claim either commits before the drain commits, or it reads the drain
 * and is refused: no lease is ever created after a drain committed.
 */
const DRAIN_LOCK_SPACE = 0x77670d; // first key of the two-key advisory lock, reserved for worker drains

export async function lockWorkerForDrain(tx: Tx, workerId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${DRAIN_LOCK_SPACE}::int, hashtext(${workerId}))`;
}

/** Every claim path calls this first: WORKER_DRAINED when an operator drained the worker. */
export async function refuseDrainedWorker(tx: Tx, workerId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock_shared(${DRAIN_LOCK_SPACE}::int, hashtext(${workerId}))`;
  // A separate statement, so its snapshot is taken after the lock was granted.
  const [drained] = await tx.$queryRaw<{ reason: string | null; drainedAt: Date }[]>`
    SELECT reason, drained_at AS "drainedAt" FROM worker_drains WHERE worker_id = ${workerId} AND drained_at IS NOT NULL`;
  if (drained) {
    throw new WorkGraphError(
      "WORKER_DRAINED",
      `worker ${workerId} is drained${drained.reason ? ` (${drained.reason})` : ""}: finish the leases you hold, claim nothing new`,
      { workerId, reason: drained.reason, drainedAt: drained.drainedAt.toISOString() },
    );
  }
}
