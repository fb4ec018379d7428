import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerAs } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";

let database: TestDatabase;
let sql: pg.Client;
beforeAll(async () => {
  database = await createTestDatabase();
  sql = await database.connect();
  await seedHistory();
});
afterAll(() => database.close());

/**
 * A history written straight into the tables, at fixed minutes before t0 (the database's now
 * when seeding). Every moment sits mid-interval, so the 5-minute buckets of the "hour" range
 * (ending at the query's now, a moment after t0) put each where the comments say.
 */
async function seedHistory() {
  const ago = (minutes: number) => `$1::timestamptz - make_interval(secs => ${minutes * 60})`;
  await sql.query("BEGIN");
  await sql.query("SELECT set_config('wg.t0', work_graph_clock()::text, true)");
  const [{ t0 }] = (await sql.query<{ t0: string }>("SELECT current_setting('wg.t0') AS t0")).rows as [{ t0: string }];
  const run = (text: string) => sql.query(text, [t0]);
  await run(`INSERT INTO work_items (id, title, status, parent_id, created_at, updated_at) VALUES
    ('a', 'a', 'open', NULL, ${ago(50)}, ${ago(50)}),
    ('b', 'b', 'open', NULL, ${ago(30)}, ${ago(30)}),
    ('c', 'c', 'released', NULL, ${ago(31)}, ${ago(28)}),
    ('d', 'd', 'open', NULL, ${ago(40)}, ${ago(40)}),
    ('p', 'p', 'open', NULL, ${ago(59)}, ${ago(59)}),
    ('p1', 'p1', 'released', 'p', ${ago(58)}, ${ago(13)}),
    ('q', 'q', 'open', NULL, ${ago(20)}, ${ago(20)}),
    ('old', 'old', 'open', NULL, ${ago(70)}, ${ago(70)})`);
  await run(`INSERT INTO dependencies (work_item_id, depends_on_id, created_at) VALUES ('b', 'c', ${ago(30)})`);
  await run(`INSERT INTO leases (work_item_id, worker_id, epoch, acquired_at, expires_at, ended_at, outcome) VALUES
    ('d', 'w', 1, ${ago(39)}, ${ago(30)}, ${ago(30)}, 'expired'),
    ('q', 'w', 1, ${ago(20)}, ${ago(5)}, ${ago(19)}, 'attention_requested')`);
  await run(`INSERT INTO attention_requests (id, work_item_id, lease_id, worker_id, kind, question, blocking, status, resolution, created_at, resolved_at)
    SELECT '00000000-0000-4000-8000-000000000001', 'q', id, 'w', 'decision', '?', true, 'resolved', 'yes', ${ago(19)}, ${ago(16)}
      FROM leases WHERE work_item_id = 'q'`);
  await run(`INSERT INTO events (work_item_id, type, actor, epoch, data, created_at) VALUES
    ('a', 'lease.claimed', 'w', 1, '{}', ${ago(47.5)}),
    ('b', 'lease.claimed', 'w', 1, '{}', ${ago(27.5)}),
    ('d', 'lease.ended', 'system', 1, '{"outcome":"expired"}', ${ago(22.5)}),
    ('d', 'lease.claimed', 'w', 2, '{}', ${ago(22.5)}),
    ('q', 'attention.requested', 'w', 1, '{"requestId":"00000000-0000-4000-8000-000000000001"}', ${ago(19)}),
    ('q', 'attention.resolved', 'op', NULL, '{"requestId":"00000000-0000-4000-8000-000000000001"}', ${ago(16)}),
    ('p', 'lease.claimed', 'w', 1, '{}', ${ago(12.5)}),
    ('a', 'lease.ended', 'w', 1, '{"outcome":"released"}', ${ago(7.5)}),
    ('b', 'lease.ended', 'op', 1, '{"outcome":"revoked"}', ${ago(7.5)}),
    ('q', 'lease.claimed', 'w', 2, '{}', ${ago(2.5)}),
    ('q', 'note.added', 'w', 2, '{}', ${ago(2.5)}),
    ('old', 'lease.claimed', 'w', 1, '{}', ${ago(62)}),
    ('old', 'lease.ended', 'w', 1, '{"outcome":"released"}', ${ago(65)})`);
  await sql.query("COMMIT");
}

describe("dashboard.activity", () => {
  it("buckets a seeded history of the last hour into 5-minute intervals", async () => {
    const { api } = await callerAs(database.instance, "operator");
    const result = await api.dashboard.activity({ range: "hour" });
    expect(result.bucketSeconds).toBe(300);
    expect(result.buckets).toHaveLength(12);
    expect(new Date(result.to).getTime() - new Date(result.from).getTime()).toBe(3_600_000);
    expect(result.buckets.at(-1)!.end).toBe(result.to);

    const series = (key: "claims" | "releases" | "expiries" | "revocations" | "attentionRequests") => result.buckets.map((bucket) => bucket[key]);
    expect(series("claims")).toEqual([0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1]);
    expect(series("expiries")).toEqual([0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]);
    expect(series("releases")).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
    expect(series("revocations")).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
    expect(series("attentionRequests")).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]);

    // Ready → claimed: a from its creation (150 s), b from its blocker's release (30 s), d from
    // its expired lease's end (450 s), p from its child's release (30 s), q from its answer (810 s).
    expect(result.buckets.map((bucket) => bucket.readyToClaimP50)).toEqual([null, null, 150, null, null, null, 30, 450, null, 30, null, 810]);
    expect(result.buckets[8]).toMatchObject({ attentionWaitP50: 180, attentionWaitP90: 180 });
    expect(result.buckets.filter((bucket) => bucket.attentionWaitP50 !== null)).toHaveLength(1);

    expect(result.totals).toEqual({
      claims: 5,
      releases: 1,
      expiries: 1,
      revocations: 1,
      attentionRequests: 1,
      readyToClaimP50: 150,
      readyToClaimP90: 666, // percentile_cont over 30, 30, 150, 450, 810
      attentionWaitP50: 180,
      attentionWaitP90: 180,
    });
  });

  it("the day and week ranges cover the older events too, in hours and 6-hour intervals", async () => {
    const { api } = await callerAs(database.instance, "agent", "activity-agent");
    const day = await api.dashboard.activity({ range: "day" });
    expect(day.buckets).toHaveLength(24);
    expect(day.totals).toMatchObject({ claims: 6, releases: 2 });
    expect(day.buckets.slice(0, 22).every((bucket) => bucket.claims === 0)).toBe(true);
    const week = await api.dashboard.activity({ range: "week" });
    expect(week.bucketSeconds).toBe(21_600);
    expect(week.buckets).toHaveLength(28);
    expect(week.totals.claims).toBe(6);
  });

  it("refuses an unknown range with VALIDATION", async () => {
    const { api } = await callerAs(database.instance, "operator");
    await expect(api.dashboard.activity({ range: "month" as "day" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});

describe("dashboard.activity over many claims", () => {
  it("estimates ready → claimed from an even sample that matches the exact percentiles closely", async () => {
    const busy = await createTestDatabase();
    try {
      const client = await busy.connect();
      // 3,000 items created 50 minutes ago, claimed one every half second: waits of 0.5 s … 1,500 s.
      await client.query(`
        WITH t0 AS (SELECT work_graph_clock() - interval '50 minutes' AS t)
        INSERT INTO work_items (id, title, created_at, updated_at) SELECT 'busy-' || g, 'busy', t, t FROM t0, generate_series(1, 3000) g`);
      await client.query(`
        INSERT INTO events (work_item_id, type, actor, epoch, created_at)
        SELECT w.id, 'lease.claimed', 'w', 1, w.created_at + make_interval(secs => split_part(w.id, '-', 2)::int * 0.5)
          FROM work_items w ORDER BY split_part(w.id, '-', 2)::int`);
      const { api } = await callerAs(busy.instance, "operator");
      const { totals } = await api.dashboard.activity({ range: "hour" });
      expect(totals.claims).toBe(3000);
      // Exact over all 3,000: p50 750.25 s, p90 1,350.05 s.
      expect(totals.readyToClaimP50).toBeGreaterThan(750.25 * 0.98);
      expect(totals.readyToClaimP50).toBeLessThan(750.25 * 1.02);
      expect(totals.readyToClaimP90).toBeGreaterThan(1350.05 * 0.98);
      expect(totals.readyToClaimP90).toBeLessThan(1350.05 * 1.02);
    } finally {
      await busy.close();
    }
  });
});

describe("dashboard.activity edge cases of the index-only counts and the claim sample", () => {
  it("counts each of several claims at one instant once, and only released, expired and revoked lease ends", async () => {
    const edge = await createTestDatabase();
    try {
      const client = await edge.connect();
      await client.query("BEGIN");
      await client.query(`
        INSERT INTO work_items (id, title, created_at, updated_at)
        SELECT 'tie-' || g, 'tie', now() - make_interval(secs => (12.5 + 10 * g) * 60), now() - make_interval(secs => (12.5 + 10 * g) * 60)
          FROM generate_series(1, 3) g`);
      // now() is the transaction's start: the three claims share one created_at.
      await client.query(`
        INSERT INTO events (work_item_id, type, actor, epoch, created_at)
        SELECT id, 'lease.claimed', 'w', 1, now() - interval '12 minutes 30 seconds' FROM work_items WHERE id LIKE 'tie-%'`);
      await client.query(`
        INSERT INTO events (work_item_id, type, actor, epoch, data, created_at) VALUES
          ('tie-1', 'lease.ended', 'w', 1, '{"outcome":"cancelled"}', now() - interval '7 minutes 30 seconds'),
          ('tie-2', 'lease.ended', 'w', 1, '{"outcome":"decomposed"}', now() - interval '7 minutes 30 seconds'),
          ('tie-3', 'lease.ended', 'w', 1, '{"outcome":"attention_requested"}', now() - interval '7 minutes 30 seconds')`);
      await client.query("COMMIT");
      const { api } = await callerAs(edge.instance, "operator");
      const { totals } = await api.dashboard.activity({ range: "hour" });
      // Created 10, 20 and 30 minutes before the claims: waits of 600 s, 1,200 s and 1,800 s.
      expect(totals).toMatchObject({ claims: 3, releases: 0, expiries: 0, revocations: 0, attentionRequests: 0 });
      expect(totals.readyToClaimP50).toBe(1200);
      expect(totals.readyToClaimP90).toBe(1680); // percentile_cont: 1,200 + 0.8 × 600
    } finally {
      await edge.close();
    }
  });
});
