import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listEvents } from "../../server/queries/events";
import { actors } from "../support/fixtures";
import { createTestDatabase, type TestDatabase } from "../support/database";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

const insertEvent = (workItemId: string, type: string) =>
  `INSERT INTO events (work_item_id, type, actor) VALUES ('${workItemId}', '${type}', 'test') RETURNING sequence`;

describe("events.list", () => {
  it("pages by after / nextCursor", async () => {
    const { operator } = await actors(database);
    for (let i = 0; i < 5; i++) await operator.workItems.create({ id: `paged-${i}`, title: `Paged ${i}` });
    const first = await operator.events.list({ limit: 2 });
    expect(first.items).toHaveLength(2);
    const second = await operator.events.list({ after: Number(first.nextCursor), limit: 2 });
    expect(second.items[0]!.sequence).toBe(first.items[1]!.sequence + 1);
    const all = await operator.events.list({ limit: 500 });
    expect(all.items.map((e) => e.sequence)).toEqual([...all.items.map((e) => e.sequence)].sort((a, b) => a - b));
    const filtered = await operator.events.list({ workItemId: "paged-3" });
    expect(filtered.items.map((e) => e.type)).toEqual(["work_item.created"]);
  });

  it("never skips an event committed after a higher sequence number was already visible", async () => {
    const { operator } = await actors(database);
    await operator.workItems.create({ id: "gap-item", title: "Gap" });
    const { items } = await operator.events.list({ limit: 500 });
    const cursor = items.at(-1)!.sequence;

    const t1 = await database.connect();
    const t2 = await database.connect();
    await t1.query("BEGIN");
    await t1.query("UPDATE work_items SET title = title WHERE id = 'gap-item'");
    const n = Number((await t1.query(insertEvent("gap-item", "test.first"))).rows[0].sequence);
    await t2.query("BEGIN");
    const m = Number((await t2.query(insertEvent("gap-item", "test.second"))).rows[0].sequence);
    await t2.query("COMMIT");
    expect(m).toBe(n + 1);

    // T1 is still open: a reader must not hand out n+1 while n may still commit.
    const whileOpen = listEvents(database.db, { after: cursor, limit: 100 });
    const committed = new Promise((resolve) => setTimeout(resolve, 300)).then(() => t1.query("COMMIT"));
    const page = await whileOpen;
    await committed;
    const seen = page.items.map((event) => event.sequence);
    if (seen.includes(m)) expect(seen).toContain(n);
    const next = await listEvents(database.db, { after: page.items.at(-1)?.sequence ?? cursor, limit: 100 });
    const all = [...seen, ...next.items.map((event) => event.sequence)];
    expect(all).toContain(n);
    expect(all).toContain(m);
    expect(all.indexOf(n)).toBeLessThan(all.indexOf(m));
  });

  it("a tailer that reads while the lower transaction is still open gets nothing past the hole", async () => {
    const t1 = await database.connect();
    const t2 = await database.connect();
    const { operator } = await actors(database);
    const before = (await operator.events.list({ limit: 500 })).items.at(-1)!.sequence;
    await t1.query("BEGIN");
    await t1.query("UPDATE work_items SET title = title WHERE id = 'gap-item'");
    const n = Number((await t1.query(insertEvent("gap-item", "test.held"))).rows[0].sequence);
    await t2.query(insertEvent("gap-item", "test.after"));
    // The reader waits up to ~2 s for T1; T1 stays open longer, so it must stop before n.
    const page = await listEvents(database.db, { after: before, limit: 100 });
    expect(page.items.every((event) => event.sequence < n)).toBe(true);
    await t1.query("ROLLBACK");
    // The rolled-back hole does not stall the reader.
    const after = await listEvents(database.db, { after: before, limit: 100 });
    expect(after.items.map((event) => event.type)).toEqual(["test.after"]);
  }, 20_000);
});
