import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { lockWorkerForDrain } from "../domain/draining";
import type { Caller } from "../domain/types";
import { listWorkers, type Worker } from "../queries/workers";

/**
 * Drains a worker: from the moment this commits its claims (next and named, and decompose's
 * claimChildId) fail with WORKER_DRAINED; its live leases are untouched. Draining again
 * updates the reason. The exclusive worker lock waits for claims in flight (draining.ts).
 */
export async function drainWorker(db: Db, caller: Caller, input: { workerId: string; reason?: string }): Promise<Worker> {
  return inTransaction(db, async (tx) => {
    await lockWorkerForDrain(tx, input.workerId);
    await tx.$executeRaw`
      INSERT INTO worker_drains (worker_id, drained_at, reason, changed_by)
      VALUES (${input.workerId}, clock_timestamp(), ${input.reason ?? null}, ${caller.actor})
      ON CONFLICT (worker_id) DO UPDATE
        SET drained_at = COALESCE(worker_drains.drained_at, EXCLUDED.drained_at), reason = EXCLUDED.reason,
            changed_by = EXCLUDED.changed_by, changed_at = clock_timestamp()`;
    return (await listWorkers(tx, input.workerId))[0]!;
  });
}

/** Lets a drained worker claim again (a no-op for a worker that is not drained). */
export async function undrainWorker(db: Db, caller: Caller, input: { workerId: string }): Promise<Worker> {
  return inTransaction(db, async (tx) => {
    await tx.$executeRaw`
      UPDATE worker_drains SET drained_at = NULL, reason = NULL, changed_by = ${caller.actor}, changed_at = clock_timestamp()
       WHERE worker_id = ${input.workerId} AND drained_at IS NOT NULL`;
    return (await listWorkers(tx, input.workerId))[0]!;
  });
}
