import type { Db } from "../db";
import type { WorkGraphEvent } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { wakeups } from "../realtime/wakeups";
import { newestSequence } from "../sql/events";
import { eventProjects, listEvents } from "./events";
import { itemIdsInProjects } from "../sql/visibility";

const PAGE = 500;
/**
 * A reader with nothing new normally sleeps until a commit is heard. It also looks again
 * after this long: a hole left by a transaction that aborted after taking a sequence number
 * is settled by the next read, and no commit announces an abort. Commits the database does not
 * announce (claims, renewals, notes, releases that readied nothing) are relayed by the instance
 * that made them (server/realtime/relay.ts); one that died before relaying is caught up here.
 */
const RECHECK_MS = 2_000;
const EVERY_PROJECT = { projects: [] };

/**
 * events.stream: the events after `after` in sequence order, as they commit, for as long as
 * the caller listens. Pages come from listEvents (the same gap-free horizon logic as
 * events.list, unfiltered so the cursor always advances) and are filtered here. Between
 * pages the reader holds no connection: it waits for the app instance's commit listener.
 * Without `after` the stream starts at the newest event committed when this call returns
 * (it returns once LISTEN is in place and that point is read, so nothing later is missed).
 * `authorize` runs before every read, also on an idle stream (at least every RECHECK_MS); it
 * throws to end the stream.
 */
export async function openEventStream(
  db: Db,
  caller: Pick<Caller, "projects">,
  input: { after?: number; workItemId?: string; types?: string[]; projectId?: string },
  signal?: AbortSignal,
  authorize: () => Promise<void> = async () => {},
): Promise<AsyncGenerator<WorkGraphEvent>> {
  const projects = eventProjects(caller, input.projectId);
  const hub = wakeups(db);
  await hub.ready();
  const start = input.after ?? (await newestSequence(db));
  const types = input.types ? new Set(input.types) : null;
  return (async function* () {
    let cursor = start;
    while (!signal?.aborted) {
      const heard = hub.eventsHeard;
      await authorize();
      const page = await listEvents(db, EVERY_PROJECT, { after: cursor, limit: PAGE });
      // Rule 12: filtered here, page by page, so the cursor still advances over other projects' events.
      const visible = projects === undefined || page.items.length === 0
        ? null
        : await itemIdsInProjects(db, [...new Set(page.items.map((event) => event.workItemId))], projects);
      for (const event of page.items) {
        if (visible !== null && !visible.has(event.workItemId)) continue;
        if ((input.workItemId === undefined || event.workItemId === input.workItemId) && (types === null || types.has(event.type))) yield event;
      }
      if (page.nextCursor !== null) {
        cursor = Number(page.nextCursor);
        continue;
      }
      await hub.eventsSince(heard, RECHECK_MS, signal);
    }
  })();
}
