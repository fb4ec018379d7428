import type { Db } from "../db";
import type { Lease } from "../domain/types";
import { toLease } from "../domain/views";
import { notFound } from "../errors";
import { findLease, selectLeasesOfItem, selectLiveLeases, selectRecentlyEndedLeases } from "../sql/leases";
import { workItemExists } from "../sql/work-items";

export async function getLease(db: Db, leaseId: string): Promise<Lease> {
  const row = await findLease(db, leaseId);
  if (!row) throw notFound("lease", leaseId);
  return toLease(row);
}

export type ActiveLease = Lease & { workItemTitle: string; secondsLeft: number };

/** Live leases, soonest expiry first, at most `limit`; the next page starts after lease `after`. */
export async function activeLeases(db: Db, input: { workerId?: string; limit: number; after?: string }): Promise<ActiveLease[]> {
  const rows = await selectLiveLeases(db, input);
  return rows.map((row) => ({ ...toLease(row), workItemTitle: row.workItemTitle, secondsLeft: Number(row.secondsLeft) }));
}

/** Most recently ended leases first (dashboard). */
export async function recentlyEndedLeases(db: Db, limit: number, workerId?: string): Promise<(Lease & { workItemTitle: string })[]> {
  const rows = await selectRecentlyEndedLeases(db, limit, workerId);
  return rows.map((row) => ({ ...toLease(row), workItemTitle: row.workItemTitle }));
}

export async function leaseHistory(db: Db, workItemId: string): Promise<Lease[]> {
  const rows = await selectLeasesOfItem(db, workItemId);
  if (rows.length === 0 && !(await workItemExists(db, workItemId))) throw notFound("work item", workItemId);
  return rows.map(toLease);
}
