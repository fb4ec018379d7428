import type pg from "pg";
import { describe, expect, onTestFinished } from "vitest";
import { createSession, endSession } from "../../server/auth/sessions";
import { revokeToken } from "../../server/auth/tokens";
import type { WorkGraphEvent } from "@work-graph/contract";
import { SESSION_COOKIE } from "../../server/trpc/init";
import { callerAs } from "../support/app";
import { twoInstanceTest } from "../support/fixtures";
import { openSse } from "../support/sse";

/*
 * events.stream (API.md "Waiting instead of polling"): SSE at GET /api/trpc/events.stream,
 * each message's id = the event's sequence, gap-free in sequence order, resumable with
 * Last-Event-ID / lastEventId. The stream is served by instance B; events are written
 * through instance A or raw SQL, so the wake-up travels through PostgreSQL.
 */

const it = twoInstanceTest()
  .extend("operatorToken", { scope: "file" }, async ({ database }) => (await callerAs(database.instance, "operator")).token)
  .extend("stream", { scope: "file" }, async ({ people, serverB, operatorToken }) => {
    await people.operator.workItems.create({ id: "gap-item", title: "Gap" });
    return (input: Record<string, unknown>, headers: Record<string, string> = {}, token: string | null = operatorToken) =>
      openSse(`${serverB.url}/api/trpc/events.stream?input=${encodeURIComponent(JSON.stringify(input))}`, {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      });
  });

const latestSequence = async (sql: pg.Client) => Number((await sql.query("SELECT coalesce(max(sequence), 0) AS s FROM events")).rows[0].s);
const committedAfter = async (sql: pg.Client, after: number) =>
  (await sql.query<{ sequence: string }>("SELECT sequence FROM events WHERE sequence > $1 ORDER BY sequence", [after])).rows.map((row) => Number(row.sequence));

async function insertEvent(client: pg.Client, type: string): Promise<number> {
  const { rows } = await client.query<{ sequence: string }>(
    "INSERT INTO events (work_item_id, type, actor) VALUES ('gap-item', $1, 'test') RETURNING sequence",
    [type],
  );
  return Number(rows[0]!.sequence);
}

type Stream = Awaited<ReturnType<typeof openSse>>;

/** The next event; its SSE id must be its sequence. */
async function nextEvent(source: Stream): Promise<WorkGraphEvent> {
  const message = await source.next();
  if (!message) throw new Error("the stream ended");
  const event = JSON.parse(message.data) as WorkGraphEvent;
  expect(message.id).toBe(String(event.sequence));
  return event;
}

/**
 * Resolves once a client of this database other than `sql` has read pg_locks after `since`
 * (database clock): an event reader has looked for transactions still in flight (the first
 * step of every read), so it has read while they were open.
 */
async function readerLookedAfter(sql: pg.Client, since: Date) {
  await expect
    .poll(async () => (await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query_start > $1 AND query LIKE '%pg_locks%'`,
      [since],
    )).rows[0]!.n, { message: "an event reader to read while the transaction is open" })
    .toBeGreaterThan(0);
}

describe("events.stream", () => {
  it("is SSE; an event committed on another instance is pushed through PostgreSQL, in order, id = sequence; without `after` only new events", async ({ people, instanceB, stream }) => {
    await people.operator.workItems.create({ id: "before-subscribe", title: "Before" });
    const source = await stream({});
    expect(source.status).toBe(200);
    expect(source.contentType).toMatch(/^text\/event-stream/);
    await source.next("connected");
    const heardBefore = instanceB.wakeups.eventsHeard;
    await people.operator.workItems.create({ id: "after-subscribe", title: "After" });
    const event = await nextEvent(source);
    expect(event).toMatchObject({ workItemId: "after-subscribe", type: "work_item.created" });
    // Instance B heard the commit made through instance A: that wakes its readers (the 2 s re-check is only a fallback).
    expect(instanceB.wakeups.eventsHeard).toBeGreaterThan(heardBefore);
    source.close();
  });

  it("a claim and a release that readies nothing, made on another instance, arrive through that instance's relay", async ({ people, instanceB, stream }) => {
    await people.operator.workItems.create({ id: "quiet-item", title: "Nothing waits for it" });
    const source = await stream({ workItemId: "quiet-item" });
    onTestFinished(() => source.close()); // an open stream would hold the server's close
    await source.next("connected");
    const agent = await people.agent("quiet-agent");
    const heardBefore = instanceB.wakeups.eventsHeard;
    const { lease } = (await agent.leases.claim({ workItemId: "quiet-item", durationSeconds: 60 }))!;
    expect(await nextEvent(source)).toMatchObject({ type: "lease.claimed", leaseId: lease.id });
    await agent.leases.release({ leaseId: lease.id, epoch: lease.epoch, evidence: "done" });
    expect(await nextEvent(source)).toMatchObject({ type: "lease.ended", leaseId: lease.id });
    expect(await nextEvent(source)).toMatchObject({ type: "work_item.status_changed", data: { to: "released" } });
    // Neither commit notified (tests/realtime/notifications.test.ts): B heard A's relays, it did not wait for its 2 s re-check.
    expect(instanceB.wakeups.eventsHeard).toBeGreaterThan(heardBefore);
  });

  it("resumes after a disconnect with Last-Event-ID or lastEventId: no gap, no duplicate", async ({ sql, people, stream }) => {
    const { operator } = people;
    const start = await latestSequence(sql);
    const first = await stream({ after: start });
    for (let i = 0; i < 5; i++) await operator.workItems.create({ id: `resume-${i}`, title: "Resume" });
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) seen.push((await nextEvent(first)).sequence);
    first.close();

    for (let i = 5; i < 10; i++) await operator.workItems.create({ id: `resume-${i}`, title: "Resume" }); // while disconnected
    // The header (what EventSource sends on reconnect) wins over `after`.
    const second = await stream({ after: start }, { "last-event-id": String(seen.at(-1)) });
    for (let i = 0; i < 4; i++) seen.push((await nextEvent(second)).sequence);
    second.close();
    const third = await stream({ after: start, lastEventId: String(seen.at(-1)) });
    const expected = await committedAfter(sql, start);
    while (seen.length < expected.length) seen.push((await nextEvent(third)).sequence);
    third.close();
    expect(seen).toEqual(expected);
  });

  it("holds back n+1 while n's transaction is open, then sends n before n+1; a reconnect in between loses neither", async ({ database, sql, stream }) => {
    const cursor = await latestSequence(sql);
    const live = await stream({ after: cursor });
    const dropped = await stream({ after: cursor });
    const t1 = await database.connect();
    await t1.query("BEGIN");
    const n = await insertEvent(t1, "test.slow");
    const m = await insertEvent(sql, "test.fast"); // commits first
    expect(m).toBe(n + 1);
    const committed = (await sql.query<{ now: Date }>("SELECT work_graph_clock() AS now")).rows[0]!.now;
    await readerLookedAfter(sql, committed); // woken by n+1's commit, the readers read while n is open
    dropped.close(); // disconnects while n is in flight and n+1 committed
    await t1.query("COMMIT");

    expect([(await nextEvent(live)).sequence, (await nextEvent(live)).sequence]).toEqual([n, m]);
    live.close();
    const resumed = await stream({}, { "last-event-id": String(cursor) });
    expect([(await nextEvent(resumed)).sequence, (await nextEvent(resumed)).sequence]).toEqual([n, m]);
    resumed.close();
  }, 30_000);

  it("a reader that reconnects every few events while writers commit out of order sees every event exactly once", async ({ database, sql, stream }) => {
    const start = await latestSequence(sql);
    const seen: number[] = [];
    const reader = (async () => {
      let lastId = String(start);
      for (;;) {
        const source = await stream({}, { "last-event-id": lastId });
        for (let i = 0; i < 7; i++) {
          const event = await nextEvent(source);
          seen.push(event.sequence);
          lastId = String(event.sequence);
          if (event.type === "test.end") return source.close();
        }
        source.close();
      }
    })();
    await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        const { api } = await callerAs(database.instance, "agent", `stream-writer-${w}`);
        for (let i = 0; i < 10; i++) {
          await api.workItems.create({ id: `stream-${w}-${i}`, title: "stream", priority: -100 });
          const claimed = await api.leases.claim({ workItemId: `stream-${w}-${i}`, durationSeconds: 60 });
          await api.leases.release({ leaseId: claimed!.lease.id, epoch: 1, evidence: "ok" });
        }
      }),
    );
    await insertEvent(sql, "test.end");
    await reader;
    expect(seen).toEqual(await committedAfter(sql, start));
  }, 60_000);

  it("filters by workItemId and types; ids stay sequences, so a filtered stream resumes too", async ({ sql, people, stream }) => {
    const { operator } = people;
    const start = await latestSequence(sql);
    const source = await stream({ after: start, workItemId: "filtered", types: ["work_item.priority_changed"] });
    await operator.workItems.create({ id: "filtered", title: "Filtered" });
    await operator.workItems.create({ id: "unrelated", title: "Unrelated" });
    await operator.workItems.setPriority({ id: "unrelated", priority: 3 });
    await operator.workItems.setPriority({ id: "filtered", priority: 5 });
    await operator.workItems.setPriority({ id: "filtered", priority: 6 });
    const first = await nextEvent(source);
    expect(first).toMatchObject({ workItemId: "filtered", type: "work_item.priority_changed", data: { to: 5 } });
    source.close();
    const resumed = await stream({ after: start, workItemId: "filtered", types: ["work_item.priority_changed"] }, { "last-event-id": String(first.sequence) });
    expect(await nextEvent(resumed)).toMatchObject({ workItemId: "filtered", data: { to: 6 } });
    resumed.close();
  });

  it("ends a stream whose token was revoked or whose dashboard session ended within seconds, idle or not, before any later event", async ({ database, people, stream }) => {
    const bearer = await callerAs(database.instance, "operator");
    const logIn = await callerAs(database.instance, "operator");
    const sessionId = await createSession(database.db, logIn.caller.tokenId);
    const byToken = await stream({}, {}, bearer.token);
    const bySession = await stream({}, { cookie: `${SESSION_COOKIE}=${sessionId}` }, null);
    try {
      for (const source of [byToken, bySession]) await source.next("connected");
      await people.operator.workItems.create({ id: "credential-live", title: "Seen by both" });
      for (const source of [byToken, bySession]) expect((await nextEvent(source)).workItemId).toBe("credential-live");

      await revokeToken(database.db, bearer.caller.tokenId);
      await endSession(database.db, sessionId); // logout; the session's token stays live
      const ended = performance.now();
      // No event is needed for the stream to notice (a dashboard tab learns it is logged out).
      for (const source of [byToken, bySession]) {
        const message = await source.next(["message", "serialized-error"]);
        expect(message?.event, `got ${message?.data}`).toBe("serialized-error");
        expect(JSON.parse(message!.data)).toMatchObject({ data: { reason: "UNAUTHENTICATED" } });
      }
      // Re-checked every 5 s, woken at least every 2 s: well under the 30 s a tRPC client waits before it reconnects.
      expect(performance.now() - ended).toBeLessThan(12_000);
    } finally {
      byToken.close();
      bySession.close();
    }
  });

  it("refuses a missing token and bad input with the API's reasons, as an SSE error message", async ({ stream }) => {
    for (const [source, reason] of [
      [await stream({}, {}, null), "UNAUTHENTICATED"],
      [await stream({ after: -1 }), "VALIDATION"],
      [await stream({}, { "last-event-id": "not-a-number" }), "VALIDATION"],
      [await stream({ types: Array.from({ length: 51 }, (_, i) => `t${i}`) }), "VALIDATION"],
    ] as const) {
      const error = await source.next("serialized-error");
      expect(JSON.parse(error!.data)).toMatchObject({ data: { reason } });
      source.close();
    }
  });
});
