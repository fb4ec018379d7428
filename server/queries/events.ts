import type { Db } from "../db";
import type { Page, WorkGraphEvent } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toEvent } from "../domain/views";
import { findSequenceHole, readEventHorizon, selectEventsBefore, selectEventsBetween, transactionsDone } from "../sql/events";
import { Prisma } from "../generated/prisma/client";
import { inProjects } from "../domain/scope";

/** How long a reader that found a hole waits for the transactions that may still fill it. */
const SETTLE_WAIT_MS = 500;
/** How far past `after` the hole search looks (index-only, on the primary key). */
const HOLE_SCAN_LIMIT = 10_000;

export interface ListEventsInput {
  workItemId?: string;
  after?: number;
  before?: number;
  order?: "asc" | "desc";
  limit: number;
  /** Rule 12 (projects scope tokens): the caller's projects narrowed to this one when given. */
  projectId?: string;
}

/** The projects filter of a caller's event read, or undefined when it reads every project. */
export const eventProjects = (caller: Pick<Caller, "projects">, projectId: string | undefined) =>
  caller.projects.length === 0 && projectId === undefined ? undefined : inProjects(caller, projectId);

/**
 * Oldest first from `after` (tailing, gap-free), or newest first below `before` (the item
 * page's "older" paging: a view, refreshed by polling, so it shows what is committed now).
 */
export async function listEvents(db: Db, caller: Pick<Caller, "projects">, input: ListEventsInput): Promise<Page<WorkGraphEvent>> {
  const projects = eventProjects(caller, input.projectId);
  return input.order === "desc" ? newestEvents(db, input, projects) : tailEvents(db, input, projects);
}

async function newestEvents(db: Db, input: ListEventsInput, inProjects: Prisma.Sql | undefined): Promise<Page<WorkGraphEvent>> {
  const rows = await selectEventsBefore(db, { before: input.before, workItemId: input.workItemId, inProjects, limit: input.limit + 1 });
  const items = rows.slice(0, input.limit).map(toEvent);
  return { items, nextCursor: rows.length > input.limit ? String(items.at(-1)!.sequence) : null };
}

/**
 * Gap-free tailing without serializing writers and without taking an xid. Sequence numbers are
 * taken in one order and committed in another, so a reader that returned seq 51 while seq 50
 * was still in flight would skip 50 forever. The events trigger gives every writer an xid
 * *before* it takes a sequence number, so a number at or below the highest visible one (the
 * horizon) that is not visible belongs to a transaction that was running when the horizon was
 * read, or to one that aborted. (The snapshot's in-progress list is not enough: a writer whose
 * xid is above the snapshot's xmax is running but not listed; every transaction with an xid
 * holds a lock on it, so pg_locks lists them all.) So, once per call and on the global
 * sequence, whatever the item filter:
 *   1. read the horizon and the xids of the transactions running now;
 *   2. none: everything up to the horizon is final;
 *   3. else look for the first hole after `after` (bounded scan); none: final up to the end of
 *      the scan; a hole: wait briefly until those transactions have ended (holes left then are
 *      aborted ones), else stop just below the hole — what is safe so far, never nothing.
 * The safe horizon is then applied to the (filtered) read.
 */
async function tailEvents(db: Db, input: ListEventsInput, inProjects: Prisma.Sql | undefined): Promise<Page<WorkGraphEvent>> {
  const after = input.after ?? 0;
  const snapshot = await readEventHorizon(db);
  const horizon = Number(snapshot?.horizon ?? 0);
  if (horizon <= after) return { items: [], nextCursor: null };
  const safe = snapshot!.running.length > 0 ? await safeHorizon(db, after, horizon, snapshot!.running) : horizon;

  const rows = safe <= after ? [] : await selectEventsBetween(db, { after, through: safe, workItemId: input.workItemId, inProjects, limit: input.limit });
  const items = rows.map(toEvent);
  if (items.length > 0) return { items, nextCursor: String(items.at(-1)!.sequence) };
  // A filtered page that stopped short of the horizon found nothing below it: move on past it.
  const filtered = input.workItemId !== undefined || inProjects !== undefined;
  return { items, nextCursor: filtered && safe > after && safe < horizon ? String(safe) : null };
}

async function safeHorizon(db: Db, after: number, horizon: number, running: string[]): Promise<number> {
  const scan = await findSequenceHole(db, after, horizon, HOLE_SCAN_LIMIT);
  if (scan?.hole === null || scan?.hole === undefined) return Number(scan?.scannedTo ?? horizon);
  if (await transactionsEnded(db, running)) return horizon;
  return Number(scan.hole) - 1;
}

/** Waits (briefly) until none of the `running` transactions is running any more. */
async function transactionsEnded(db: Db, running: string[]): Promise<boolean> {
  const deadline = Date.now() + SETTLE_WAIT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    if (await transactionsDone(db, running)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
