import type { Db } from "../db";
import type { Lease } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toLease } from "../domain/views";
import { notFound } from "../errors";
import { findLease, selectLeasesOfItem, selectLiveLeases, selectRecentlyEndedLeases } from "../sql/leases";
import { workItemExists } from "../sql/work-items";
import { inCallerScope, inProjects } from "../domain/scope";
import { refuseItemOutsideScope, refuseLeaseOutsideScope } from "../sql/visibility";

export async function getLease(db: Db, caller: Pick<Caller, "projects">, leaseId: string): Promise<Lease> {
  await refuseLeaseOutsideScope(db, caller, leaseId);
  const row = await findLease(db, leaseId);
  if (!row) throw notFound("lease", leaseId);
  return toLease(row);
}

export type ActiveLease = Lease & { workItemTitle: string; secondsLeft: number };

/** Live leases, soonest expiry first, at most `limit`; the next page starts after lease `after`. */
export async function activeLeases(
  db: Db,
  caller: Pick<Caller, "projects">,
  input: { workerId?: string; limit: number; after?: string; projectId?: string },
): Promise<ActiveLease[]> {
  const rows = await selectLiveLeases(db, { ...input, inProjects: inProjects(caller, input.projectId) });
  return rows.map((row) => ({ ...toLease(row), workItemTitle: row.workItemTitle, secondsLeft: Number(row.secondsLeft) }));
}

/** Most recently ended leases first (dashboard). */
export async function recentlyEndedLeases(
  db: Db,
  caller: Pick<Caller, "projects">,
  limit: number,
  workerId?: string,
): Promise<(Lease & { workItemTitle: string })[]> {
  const rows = await selectRecentlyEndedLeases(db, limit, inCallerScope(caller), workerId);
  return rows.map((row) => ({ ...toLease(row), workItemTitle: row.workItemTitle }));
}

export async function leaseHistory(db: Db, caller: Pick<Caller, "projects">, workItemId: string): Promise<Lease[]> {
  await refuseItemOutsideScope(db, caller, workItemId);
  const rows = await selectLeasesOfItem(db, workItemId);
  if (rows.length === 0 && !(await workItemExists(db, workItemId))) throw notFound("work item", workItemId);
  return rows.map(toLease);
}
