import { Prisma } from "../generated/prisma/client";
import type { EventType } from "@work-graph/contract";
import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import { EVENT_COLUMNS, type toEvent } from "../domain/views";

export interface NewEvent {
  workItemId: string;
  type: EventType;
  actor: string;
  leaseId?: string | null;
  epoch?: number | null;
  data?: Record<string, unknown>;
}

/** Appends events in the caller's transaction; their sequence numbers are assigned by the events trigger. */
export async function appendEvents(tx: Tx, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map(
    (event) => Prisma.sql`(${event.workItemId}, ${event.type}, ${event.actor}, ${event.leaseId ?? null}::uuid,
      ${event.epoch ?? null}::int, ${JSON.stringify(event.data ?? {})}::jsonb)`,
  );
  await tx.$executeRaw`INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data) VALUES ${Prisma.join(rows)}`;
}

export type EventRow = Parameters<typeof toEvent>[0];

const itemFilter = (workItemId: string | undefined, inProjects: Prisma.Sql | undefined) => Prisma.sql`
  ${workItemId !== undefined ? Prisma.sql`AND e.work_item_id = ${workItemId}` : Prisma.empty}
  ${inProjects !== undefined ? Prisma.sql`AND EXISTS (SELECT 1 FROM work_items w WHERE w.id = e.work_item_id AND ${inProjects})` : Prisma.empty}`;

/** Up to `limit` events below sequence `before` (all when undefined), newest first, of one item when given. */
export async function selectEventsBefore(db: Db, input: { before?: number; workItemId?: string; inProjects?: Prisma.Sql; limit: number }): Promise<EventRow[]> {
  return db.$queryRaw<EventRow[]>`
    SELECT ${EVENT_COLUMNS} FROM events e
     WHERE TRUE ${input.before !== undefined ? Prisma.sql`AND e.sequence < ${input.before}` : Prisma.empty} ${itemFilter(input.workItemId, input.inProjects)}
     ORDER BY e.sequence DESC LIMIT ${input.limit}`;
}

/** Up to `limit` events with after < sequence <= through, oldest first, of one item when given. */
export async function selectEventsBetween(db: Db, input: { after: number; through: number; workItemId?: string; inProjects?: Prisma.Sql; limit: number }): Promise<EventRow[]> {
  return db.$queryRaw<EventRow[]>`
    SELECT ${EVENT_COLUMNS} FROM events e
     WHERE e.sequence > ${input.after} AND e.sequence <= ${input.through} ${itemFilter(input.workItemId, input.inProjects)}
     ORDER BY e.sequence LIMIT ${input.limit}`;
}

/** The highest visible sequence number and the xids of the transactions running now (other than this one). */
export async function readEventHorizon(db: Db): Promise<{ horizon: bigint | null; running: string[] } | undefined> {
  const [snapshot] = await db.$queryRaw<{ horizon: bigint | null; running: string[] }[]>`
    SELECT (SELECT max(sequence) FROM events) AS horizon,
           ARRAY(SELECT transactionid::text FROM pg_locks
                  WHERE locktype = 'transactionid' AND mode = 'ExclusiveLock' AND granted AND pid <> pg_backend_pid()) AS running`;
  return snapshot;
}

/**
 * The first missing sequence number after `after` among the first `scanLimit` up to
 * `horizon` (index-only, on the primary key), and how far the scan got.
 */
export async function findSequenceHole(db: Db, after: number, horizon: number, scanLimit: number): Promise<{ hole: bigint | null; scannedTo: bigint | null } | undefined> {
  const [scan] = await db.$queryRaw<{ hole: bigint | null; scannedTo: bigint | null }[]>`
    WITH scanned AS (
      SELECT sequence, row_number() OVER (ORDER BY sequence) AS n FROM (
        SELECT sequence FROM events WHERE sequence > ${after} AND sequence <= ${horizon} ORDER BY sequence LIMIT ${scanLimit}
      ) s
    )
    SELECT (SELECT min(${after} + n) FROM scanned WHERE sequence <> ${after} + n) AS hole, (SELECT max(sequence) FROM scanned) AS "scannedTo"`;
  return scan;
}

/** Whether none of the transactions with these xids is running any more. */
export async function transactionsDone(db: Db, xids: string[]): Promise<boolean> {
  const [row] = await db.$queryRaw<{ done: boolean }[]>`
    SELECT NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'transactionid' AND mode = 'ExclusiveLock' AND granted
                          AND transactionid::text = ANY(${xids}::text[])) AS done`;
  return row?.done ?? false;
}

/** The newest event's sequence number (0 when there is none). */
export async function newestSequence(db: Db): Promise<number> {
  const [row] = await db.$queryRaw<{ newest: bigint | null }[]>`SELECT max(sequence) AS newest FROM events`;
  return Number(row?.newest ?? 0);
}
