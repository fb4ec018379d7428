import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import { LEASE_OUTCOMES, type LeaseOutcome, type Worker } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { countLeasesEndedLastHour } from "../sql/leases";
import { selectWorkers } from "../sql/workers";

/** workers.list answers at most this many workers (the most recently seen). */
export const WORKERS_LIMIT = 1000;

/**
 * Every worker seen: each worker id that ever held a lease, was drained, or has an active
 * agent token. All derived from existing rows through indexes, nothing written per request:
 * lease workers by a loose index scan, last seen = the worker's latest event (it is the actor
 * of its claims, renewals, notes, finishes and attention requests), last-hour counts from
 * leases by (worker_id, acquired_at) and (worker_id, ended_at).
 */
export async function listWorkers(db: Db | Tx, only?: string, caller: Pick<Caller, "projects"> = { projects: [] }): Promise<Worker[]> {
  const rows = await selectWorkers(db, only, WORKERS_LIMIT, caller.projects);
  return rows.map((row) => ({
    workerId: row.workerId,
    liveLeases: Number(row.liveLeases),
    drained: row.drainedAt !== null,
    drainReason: row.drainReason,
    drainedBy: row.drainedBy,
    drainedByName: row.drainedByName,
    lastSeenAt: row.lastSeenAt ? row.lastSeenAt.toISOString() : null,
    lastHour: { claimed: Number(row.claimed), released: Number(row.released), expired: Number(row.expired), revoked: Number(row.revoked) },
    capabilities: row.capabilities,
  }));
}

/** Dashboard: leases ended in the last hour, per outcome (revoked apart from expired). */
export async function endedLastHour(db: Db, caller: Pick<Caller, "projects">): Promise<Record<LeaseOutcome, number>> {
  const rows = await countLeasesEndedLastHour(db, caller);
  const counts = Object.fromEntries(LEASE_OUTCOMES.map((outcome) => [outcome, 0])) as Record<LeaseOutcome, number>;
  for (const row of rows) counts[row.outcome] = Number(row.n);
  return counts;
}
