import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import type { Lease } from "../domain/types";
import { LEASE_COLUMNS, toLease, type LeaseRow } from "../domain/views";
import { notFound } from "../errors";

export async function getLease(db: Db, leaseId: string): Promise<Lease> {
  const [row] = await db.$queryRaw<LeaseRow[]>`SELECT ${LEASE_COLUMNS} FROM leases l WHERE l.id = ${leaseId}::uuid`;
  if (!row) throw notFound("lease", leaseId);
  return toLease(row);
}

export type ActiveLease = Lease & { workItemTitle: string; secondsLeft: number };

/** Live leases, soonest expiry first, at most `limit`; the next page starts after lease `after`. */
export async function activeLeases(db: Db, input: { workerId?: string; limit: number; after?: string }): Promise<ActiveLease[]> {
  const rows = await db.$queryRaw<(LeaseRow & { workItemTitle: string; secondsLeft: number })[]>`
    SELECT ${LEASE_COLUMNS}, w.title AS "workItemTitle",
           round(extract(epoch FROM l.expires_at - statement_timestamp())::numeric, 3)::float8 AS "secondsLeft"
      FROM leases l JOIN work_items w ON w.id = l.work_item_id
     WHERE l.ended_at IS NULL AND l.expires_at > statement_timestamp()
       ${input.workerId ? Prisma.sql`AND l.worker_id = ${input.workerId}` : Prisma.empty}
       ${input.after ? Prisma.sql`AND (l.expires_at, l.id) > (SELECT p.expires_at, p.id FROM leases p WHERE p.id = ${input.after}::uuid)` : Prisma.empty}
     ORDER BY l.expires_at, l.id LIMIT ${input.limit}`;
  return rows.map((row) => ({ ...toLease(row), workItemTitle: row.workItemTitle, secondsLeft: Number(row.secondsLeft) }));
}

/** Most recently ended leases first (dashboard). */
export async function recentlyEndedLeases(db: Db, limit: number, workerId?: string): Promise<(Lease & { workItemTitle: string })[]> {
  const rows = await db.$queryRaw<(LeaseRow & { workItemTitle: string })[]>`
    SELECT ${LEASE_COLUMNS}, w.title AS "workItemTitle"
      FROM leases l JOIN work_items w ON w.id = l.work_item_id
     WHERE l.ended_at IS NOT NULL ${workerId ? Prisma.sql`AND l.worker_id = ${workerId}` : Prisma.empty}
     ORDER BY l.ended_at DESC, l.id LIMIT ${limit}`;
  return rows.map((row) => ({ ...toLease(row), workItemTitle: row.workItemTitle }));
}

export async function leaseHistory(db: Db, workItemId: string): Promise<Lease[]> {
  const rows = await db.$queryRaw<LeaseRow[]>`SELECT ${LEASE_COLUMNS} FROM leases l WHERE l.work_item_id = ${workItemId} ORDER BY l.epoch`;
  if (rows.length === 0) {
    const [exists] = await db.$queryRaw<{ id: string }[]>`SELECT id FROM work_items WHERE id = ${workItemId}`;
    if (!exists) throw notFound("work item", workItemId);
  }
  return rows.map(toLease);
}
