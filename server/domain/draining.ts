import type { Tx } from "../database/transaction";
import { WorkGraphError } from "../errors";

/*
 * Claims and drains of one worker serialize on an advisory lock keyed by the worker id (the
 * SQL functions of migration 20261203120000_operator_control): a claim either commits before a
 * drain commits, or it sees the drain and is refused. No lease is created after a drain committed.
 */

/** The drain side: waits for the worker's claims in flight and holds them off until commit. */
export async function lockWorkerForDrain(tx: Tx, workerId: string): Promise<void> {
  await tx.$executeRaw`SELECT lock_worker_for_drain(${workerId})`;
}

/** Every claim path calls this first: WORKER_DRAINED when an operator drained the worker. */
export async function refuseDrainedWorker(tx: Tx, workerId: string): Promise<void> {
  const [drained] = await tx.$queryRaw<{ reason: string | null; drainedAt: Date }[]>`
    SELECT reason, drained_at AS "drainedAt" FROM claimable_worker_drain(${workerId})`;
  if (drained) {
    throw new WorkGraphError(
      "WORKER_DRAINED",
      `worker ${workerId} is drained${drained.reason ? ` (${drained.reason})` : ""}: finish the leases you hold, claim nothing new`,
      { workerId, reason: drained.reason, drainedAt: drained.drainedAt.toISOString() },
    );
  }
}
