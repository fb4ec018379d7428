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
 * sequence number, so every number at or below the highest visible one (the horizon) belongs
 * to a transaction that had an xid when the horizon was read: committed, aborted, or still
 * running. We therefore:
 *   1. read the horizon;
 *   2. read the rows up to it; if they are contiguous, nothing can be missing: return them;
 *   3. otherwise take a fresh xid as a mark (it is larger than every xid assigned before) and
 *      wait until no transaction older than the mark is running (ours last milliseconds),
 *      then read again up to the same horizon; holes left then are aborted transactions.
 * (The snapshot's in-progress list is not enough: a writer whose xid is above the snapshot's
 * xmax is running but not listed.) Nothing above the horizon is returned, so a later call
 * continues from a safe cursor. If the wait times out, only the contiguous prefix is returned.
 */
export async function listEvents(db: Db, input: { workItemId?: string; after?: number; limit: number }): Promise<Page<WorkGraphEvent>> {
  const after = input.after ?? 0;
  const [snapshot] = await db.$queryRaw<{ horizon: bigint | null }[]>`SELECT max(sequence) AS horizon FROM events`;
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
    if (await olderTransactionsFinished(db)) {
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

/** Waits (briefly) until every transaction that got its xid before this call has finished. */
async function olderTransactionsFinished(db: Db): Promise<boolean> {
  const [mark] = await db.$queryRaw<{ xid: string }[]>`SELECT pg_current_xact_id()::text AS xid`;
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    const [row] = await db.$queryRaw<{ done: boolean }[]>`
      SELECT pg_snapshot_xmin(pg_current_snapshot()) >= ${mark!.xid}::xid8 AS done`;
    if (row?.done) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
