import { describe, expect } from "vitest";
import { databaseTest } from "../support/fixtures";
import { insertReadyItems } from "../support/factories";

/* Every list the dashboard reads has a hard upper limit and pages (newest first where a long-running item needs it). */

const it = databaseTest({ poolSize: 8 });

describe("bounded reads", () => {
  it("leases.active returns at most 200 by default, at most 500 when asked, and pages after a lease", async ({ sql, people: world }) => {
    const { operator, agent } = world;
    await insertReadyItems(sql, "many", 230);
    const worker = await agent("busy-worker");
    for (let i = 0; i < 230; i++) expect(await worker.leases.claim({ durationSeconds: 600 })).not.toBeNull();

    const first = await operator.leases.active();
    expect(first).toHaveLength(200);
    const rest = await operator.leases.active({ after: first.at(-1)!.id, limit: 500 });
    expect(rest).toHaveLength(30);
    const all = [...first, ...rest];
    expect(new Set(all.map((lease) => lease.id)).size).toBe(230);
    expect(all.map((lease) => lease.expiresAt)).toEqual([...all.map((lease) => lease.expiresAt)].sort());
    await expect(operator.leases.active({ limit: 501 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  }, 120_000);

  it("notes and events page newest first ('older'), and dependents are bounded with their total", async ({ sql, people: world }) => {
    const { operator, agent } = world;
    await operator.workItems.create({ id: "long-running", title: "Long running", priority: 1000 });
    const worker = await agent("chatty");
    const { lease } = (await worker.leases.claim({ workItemId: "long-running", durationSeconds: 600 }))!;
    for (let i = 1; i <= 7; i++) await worker.leases.note({ leaseId: lease.id, epoch: 1, content: `note ${i}` });

    const notes: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await operator.notes.list({ workItemId: "long-running", order: "desc", limit: 3, cursor });
      expect(page.items.length).toBeLessThanOrEqual(3);
      notes.push(...page.items.map((note) => note.content));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(notes).toEqual(["note 7", "note 6", "note 5", "note 4", "note 3", "note 2", "note 1"]);

    const newest = await operator.events.list({ workItemId: "long-running", order: "desc", limit: 2 });
    const older = await operator.events.list({ workItemId: "long-running", order: "desc", limit: 500, before: Number(newest.nextCursor) });
    const sequences = [...newest.items, ...older.items].map((event) => event.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => b - a));
    const ascending = await operator.events.list({ workItemId: "long-running", limit: 500 });
    expect([...sequences].reverse()).toEqual(ascending.items.map((event) => event.sequence));
    expect(older.nextCursor).toBeNull();

    await sql.query(`INSERT INTO work_items (id, title, open_dependency_count) SELECT 'dep-' || g, 'dependent', 1 FROM generate_series(1, 150) g`);
    await sql.query(`INSERT INTO dependencies (work_item_id, depends_on_id) SELECT 'dep-' || g, 'long-running' FROM generate_series(1, 150) g`);
    const around = await operator.dashboard.neighbourhood({ id: "long-running" });
    expect(around.dependents).toHaveLength(100);
    expect(around.dependentCount).toBe(150);
  }, 60_000);
});
