import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import type { Page, WorkGraphEvent } from "../domain/types";
import { EVENT_COLUMNS, toEvent } from "../domain/views";

type EventRow = Parameters<typeof toEvent>[0];

const SETTLE_TIMEOUT_MS = 2_000;

/**
 * Gap-free tailing without serializing writers. Sequence numbers are taken in one order and
 * committed in another, so a reader that returned seq 51 while seq 50 was still in flight
 * would skip 50 forever. The events trigger gives every writer an xid *before* it takes a
 * sequence number, so any number at or below the highest visible one belongs to a
 * transaction that was committed, aborted, or in flight (in our snapshot's xip list) when we
 * looked. We therefore:
 *   1. read the horizon (highest visible sequence) and the in-flight xids in one snapshot;
 *   2. if the rows up to the horizon are contiguous, nothing is missing: return them;
 *   3. otherwise wait until those transactions have finished (ours last milliseconds) and
 *      read again up to the same horizon; holes left then are aborted transactions.
 * Nothing above the horizon is returned, so a later call continues from a safe cursor.
 */
export async function listEvents(db: Db, input: { workItemId?: string; after?: number; limit: number }): Promise<Page<WorkGraphEvent>> {
  const after = input.after ?? 0;
  const [snapshot] = await db.$queryRaw<{ horizon: bigint | null; inFlight: string[] }[]>`
    SELECT (SELECT max(sequence) FROM events) AS horizon,
           ARRAY(SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) AS x) AS "inFlight"`;
  const horizon = Number(snapshot?.horizon ?? 0);
  if (horizon <= after) return { items: [], nextCursor: null };

  const read = () => db.$queryRaw<EventRow[]>`
    SELECT ${EVENT_COLUMNS} FROM events e
     WHERE e.sequence > ${after} AND e.sequence <= ${horizon}
       ${input.workItemId !== undefined ? Prisma.sql`AND e.work_item_id = ${input.workItemId}` : Prisma.empty}
     ORDER BY e.sequence LIMIT ${input.limit}`;

  let rows = input.workItemId === undefined ? await read() : null;
  const contiguous = rows !== null && rows.every((row, index) => Number(row.sequence) === after + index + 1)
    && (rows.length === input.limit || after + rows.length === horizon);
  if (!contiguous) {
    const inFlight = snapshot?.inFlight ?? [];
    if (await settled(db, inFlight)) {
      rows = await read();
    } else if (rows !== null) {
      rows = rows.filter((row, index) => Number(row.sequence) === after + index + 1);
    } else {
      rows = [];
    }
  }
  const items = (rows ?? []).map(toEvent);
  return { items, nextCursor: items.length > 0 ? String(items.at(-1)!.sequence) : null };
}

/** Waits (briefly) until none of the given transactions is still in progress. */
async function settled(db: Db, xids: string[]): Promise<boolean> {
  if (xids.length === 0) return true;
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    const [row] = await db.$queryRaw<{ running: number }[]>`
      SELECT count(*)::int AS running FROM unnest(${xids}::text[]) AS x WHERE pg_xact_status(x::xid8) = 'in progress'`;
    if ((row?.running ?? 0) === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
