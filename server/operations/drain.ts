import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import type { Caller } from "../domain/types";
import type { Worker } from "@work-graph/contract";
import { listWorkers } from "../queries/workers";
import { endDrain, lockWorkerForDrain, upsertDrain } from "../sql/workers";

/**
 * Drains a worker: from the moment this commits its claims (next and named, and decompose's
 * claimChildId) fail with WORKER_DRAINED; its live leases are untouched. Draining again
 * updates the reason. The exclusive worker lock waits for claims in flight (server/domain/draining.ts).
 */
export async function drainWorker(db: Db, caller: Caller, input: { workerId: string; reason?: string }): Promise<Worker> {
  return inTransaction(db, async (tx) => {
    await lockWorkerForDrain(tx, input.workerId);
    await upsertDrain(tx, input.workerId, input.reason ?? null, caller.actor);
    return (await listWorkers(tx, input.workerId))[0]!;
  });
}

/** Lets a drained worker claim again (a no-op for a worker that is not drained). */
export async function undrainWorker(db: Db, caller: Caller, input: { workerId: string }): Promise<Worker> {
  return inTransaction(db, async (tx) => {
    await endDrain(tx, input.workerId, caller.actor);
    return (await listWorkers(tx, input.workerId))[0]!;
  });
}
