import type pg from "pg";
import { describe, expect } from "vitest";
import type { WorkGraphEvent } from "@work-graph/contract";
import { databaseTest } from "../support/fixtures";

const it = databaseTest();
it.beforeAll(async ({ people }) => {
  await people.operator.workItems.create({ id: "gap-item", title: "Gap" });
});

/** Inserts one event on `client` (inside whatever transaction it has open) and returns its sequence. */
async function insertEvent(client: pg.Client, type: string): Promise<number> {
  const { rows } = await client.query<{ sequence: string }>(
    "INSERT INTO events (work_item_id, type, actor) VALUES ('gap-item', $1, 'test') RETURNING sequence",
    [type],
  );
  return Number(rows[0]!.sequence);
}

/** Resolves once a reader is waiting for in-flight transactions (its last query, seen in pg_stat_activity). */
async function readerWaiting(sql: pg.Client) {
  await expect
    .poll(async () => (await sql.query(
      "SELECT 1 FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND query LIKE '%transactionid::text = ANY%'",
    )).rows.length, { message: "a reader waiting for in-flight transactions", interval: 1 })
    .toBeGreaterThan(0);
}

const latestSequence = async (sql: pg.Client) => Number((await sql.query("SELECT coalesce(max(sequence), 0) AS s FROM events")).rows[0].s);
const sequences = (events: WorkGraphEvent[]) => events.map((event) => event.sequence);

describe("events.list", () => {
  it("pages by after / nextCursor: every event once, in sequence order", async ({ people: world }) => {
    const { operator } = world;
    for (let i = 0; i < 7; i++) await operator.workItems.create({ id: `paged-${i}`, title: `Paged ${i}`, priority: i });
    const all = await operator.events.list({ limit: 500 });
    expect(sequences(all.items)).toEqual([...sequences(all.items)].sort((a, b) => a - b));
    expect(all.nextCursor).toBe(String(all.items.at(-1)!.sequence));

    const walked: number[] = [];
    let after: number | undefined;
    for (let page = 0; page < 100; page++) {
      const { items, nextCursor } = await operator.events.list({ after, limit: 2 });
      if (items.length === 0) {
        expect(nextCursor).toBeNull();
        break;
      }
      expect(items.length).toBeLessThanOrEqual(2);
      walked.push(...sequences(items));
      after = Number(nextCursor);
    }
    expect(walked).toEqual(sequences(all.items));
    expect(new Set(walked).size).toBe(walked.length);

    // Filtered by item, paged the same way.
    const first = await operator.events.list({ workItemId: "paged-3", limit: 1 });
    expect(first.items.map((e) => [e.workItemId, e.type])).toEqual([["paged-3", "work_item.created"]]);
    const rest = await operator.events.list({ workItemId: "paged-3", after: Number(first.nextCursor), limit: 10 });
    expect(rest).toEqual({ items: [], nextCursor: null });
    expect(await operator.events.list({ after: 1_000_000_000 })).toEqual({ items: [], nextCursor: null });
  });

  it("holds back n+1 while n's transaction is open, then returns n before n+1", async ({ database, sql, people: world }) => {
    const { operator } = world;
    const cursor = await latestSequence(sql);
    const committedBefore = await insertEvent(sql, "test.before");

    const t1 = await database.connect();
    const t2 = await database.connect();
    await t1.query("BEGIN");
    const n = await insertEvent(t1, "test.first");
    await t2.query("BEGIN");
    const m = await insertEvent(t2, "test.second");
    await t2.query("COMMIT");
    expect(m).toBe(n + 1);

    // T1 is still open: n+1 is visible in the table, but a reader must not hand it out.
    const whileOpen = await operator.events.list({ after: cursor, limit: 100 });
    expect(sequences(whileOpen.items)).toEqual([committedBefore]);

    await t1.query("COMMIT");
    const next = await operator.events.list({ after: Number(whileOpen.nextCursor), limit: 100 });
    expect(next.items.map((e) => [e.sequence, e.type])).toEqual([[n, "test.first"], [m, "test.second"]]);
    // The filtered reader follows the same rule.
    const filtered = await operator.events.list({ workItemId: "gap-item", after: cursor, limit: 100 });
    expect(sequences(filtered.items)).toEqual([committedBefore, n, m]);
  }, 20_000);

  it("a reader that catches n in flight either stops before n or, once it commits, returns n then n+1", async ({ database, sql, people: world }) => {
    const { operator } = world;
    const cursor = await latestSequence(sql);
    const t1 = await database.connect();
    const t2 = await database.connect();
    await t1.query("BEGIN");
    const n = await insertEvent(t1, "test.slow");
    const m = await insertEvent(t2, "test.fast"); // autocommit
    const reading = operator.events.list({ after: cursor, limit: 100 });
    await readerWaiting(sql);
    await t1.query("COMMIT");
    const page = await reading;
    const seen = sequences(page.items);
    expect(seen.length === 0 || seen[0] === n).toBe(true);
    if (seen.includes(m)) expect(seen.slice(0, 2)).toEqual([n, m]);
    const next = await operator.events.list({ after: page.items.length > 0 ? Number(page.nextCursor) : cursor, limit: 100 });
    expect([...seen, ...sequences(next.items)]).toEqual([n, m]);
  }, 20_000);

  it("a rolled-back transaction's hole does not stall the reader", async ({ database, sql, people: world }) => {
    const { operator } = world;
    const cursor = await latestSequence(sql);
    const t1 = await database.connect();
    await t1.query("BEGIN");
    const n = await insertEvent(t1, "test.doomed");
    const m = await insertEvent(sql, "test.survivor");
    expect(m).toBe(n + 1);
    const reading = operator.events.list({ after: cursor, limit: 100 });
    await readerWaiting(sql);
    await t1.query("ROLLBACK");
    const page = await reading;
    const seen = sequences(page.items);
    expect(seen.every((sequence) => sequence === m)).toBe(true);

    // From here on, every reader goes straight past the hole.
    for (const input of [{ after: cursor }, { after: cursor, workItemId: "gap-item" }]) {
      const after = await operator.events.list({ ...input, limit: 100 });
      expect(after.items.map((e) => [e.sequence, e.type])).toEqual([[m, "test.survivor"]]);
    }
  }, 20_000);

  it("filtered by item, answers what is safe so far while other transactions run, without waiting for them", async ({ database, sql, people: world }) => {
    const { operator } = world;
    await operator.workItems.create({ id: "quiet-item", title: "Quiet" });
    const cursor = await latestSequence(sql);
    const mine = await operator.workItems.setPriority({ id: "quiet-item", priority: 3 }).then(() => latestSequence(sql));
    // A long writing transaction elsewhere holds a hole above this item's event, another only an xid.
    const writer = await database.connect();
    const bystander = await database.connect();
    await writer.query("BEGIN");
    const hole = await insertEvent(writer, "test.long-running");
    await bystander.query("BEGIN");
    await bystander.query("SELECT pg_current_xact_id()");
    const above = await insertEvent(sql, "test.above-the-hole");
    expect(hole).toBeGreaterThan(mine);

    const page = await operator.events.list({ workItemId: "quiet-item", after: cursor, limit: 100 });
    expect(sequences(page.items)).toEqual([mine]);
    const gapPage = await operator.events.list({ workItemId: "gap-item", after: cursor, limit: 100 });
    expect(sequences(gapPage.items)).toEqual([]); // the event above the open hole is held back
    expect((await operator.events.list({ workItemId: "quiet-item", after: mine, limit: 100 })).items).toEqual([]);

    await writer.query("COMMIT");
    await bystander.query("COMMIT");
    expect(sequences((await operator.events.list({ workItemId: "gap-item", after: cursor, limit: 100 })).items)).toEqual([hole, above]);
  }, 20_000);

  it("a tailer polling during concurrent writes sees every committed event exactly once, in order", async ({ sql, people: world }) => {
    const { operator, agent } = world;
    const start = await latestSequence(sql);
    let writing = true;
    const seen: number[] = [];
    const tail = (async () => {
      let after = start;
      for (;;) {
        const done = !writing;
        const { items, nextCursor } = await operator.events.list({ after, limit: 50 });
        seen.push(...sequences(items));
        if (nextCursor) after = Number(nextCursor);
        if (done && items.length === 0) return;
      }
    })();
    await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        const api = await agent(`tail-writer-${w}`);
        for (let i = 0; i < 15; i++) {
          await api.workItems.create({ id: `tail-${w}-${i}`, title: "tail", priority: -100 });
          const claimed = await api.leases.claim({ workItemId: `tail-${w}-${i}`, durationSeconds: 60 });
          await api.leases.release({ leaseId: claimed!.lease.id, epoch: 1, evidence: "ok" });
        }
      }),
    );
    writing = false;
    await tail;
    const { rows } = await sql.query<{ sequence: string }>("SELECT sequence FROM events WHERE sequence > $1 ORDER BY sequence", [start]);
    expect(seen).toEqual(rows.map((row) => Number(row.sequence)));
  }, 30_000);
});
