import type pg from "pg";
import { describe, expect } from "vitest";
import type { Db } from "../../server/db";
import type { Lease } from "@work-graph/contract";
import { startExpirySweeper } from "../../server/operations/sweep";
import { databaseTest, advanceClockPast, type Actors } from "../support/fixtures";
import { insertReadyItems } from "../support/factories";
import { testInstance } from "../support/database";

const it = databaseTest();

/** Leases every item `${prefix}-…` for 1 s, in parallel (so they all expire within a moment of each other). */
async function leaseAllBriefly(sql: pg.Client, people: Actors, prefix: string, count: number, workers: number) {
  await insertReadyItems(sql, prefix, count);
  const apis = await Promise.all(Array.from({ length: workers }, (_, w) => people.agent(`${prefix}-sleeper-${w}`)));
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${String(i + 1).padStart(5, "0")}`);
  const leases: Lease[] = await Promise.all(
    ids.map(async (id, i) => (await apis[i % workers]!.leases.claim({ workItemId: id, durationSeconds: 1 }))!.lease),
  );
  return { ids, leases };
}

const expiredEvents = async (sql: pg.Client, prefix: string) =>
  (await sql.query<{ lease_id: string; n: number; late: boolean }>(
    `SELECT e.lease_id, count(*)::int AS n, bool_or(e.created_at > l.expires_at + interval '5 seconds') AS late
       FROM events e JOIN leases l ON l.id = e.lease_id
      WHERE e.type = 'lease.ended' AND e.work_item_id LIKE $1 GROUP BY e.lease_id`,
    [`${prefix}-%`],
  )).rows;

/** An expiry sweeper of the instance on `db` that counts its completed passes. */
function countingSweeper(db: Db, intervalMs: number, errors: unknown[]) {
  const counted = { passes: 0 };
  const sweeper = startExpirySweeper(db, intervalMs, (error) => errors.push(error), () => counted.passes++);
  return Object.assign(counted, { stop: () => sweeper.stop() });
}

describe("expiry sweep", () => {
  it("two app instances' sweepers end 150 leases expiring at once within 5 s, each exactly once", async ({ database, sql, people }) => {
    const { ids, leases } = await leaseAllBriefly(sql, people, "sweep", 150, 10);
    const secondInstance = testInstance(database.url, { poolSize: 3 });
    const errors: unknown[] = [];
    // The production default interval (WORK_GRAPH_SWEEP_INTERVAL_MS = 1000), two instances; the
    // second starts once the first has swept, so they do not run in step.
    const sweepers = [countingSweeper(database.db, 1_000, errors)];
    try {
      await expect.poll(() => sweepers[0]!.passes).toBeGreaterThan(0);
      sweepers.push(countingSweeper(secondInstance.db, 1_000, errors));
      await advanceClockPast(sql, leases.map((lease) => lease.expiresAt).sort().at(-1)!);
      // Each lease.ended event is checked below to be at most 5 s after its expiry (database clock).
      await expect
        .poll(async () => (await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM leases WHERE work_item_id LIKE 'sweep-%' AND outcome IS NOT NULL")).rows[0]!.n, { timeout: 10_000 })
        .toBe(ids.length);
      // Another full pass of each sweeper after that: one that ended anything twice would show now.
      const passed = sweepers.map((sweeper) => sweeper.passes);
      await expect.poll(() => sweepers.every((sweeper, i) => sweeper.passes >= passed[i]! + 2), { timeout: 10_000 }).toBe(true);
    } finally {
      await Promise.all(sweepers.map((sweeper) => sweeper.stop()));
      await secondInstance.close();
    }
    expect(errors).toEqual([]);
    const events = await expiredEvents(sql, "sweep");
    expect(events).toHaveLength(ids.length);
    expect(events.filter((row) => row.n !== 1)).toEqual([]);
    expect(events.filter((row) => row.late)).toEqual([]);
    const { rows } = await sql.query(`
      SELECT count(*) FILTER (WHERE l.outcome = 'expired' AND l.ended_at = l.expires_at)::int AS expired_at_expiry,
             count(*) FILTER (WHERE w.current_lease_id IS NULL AND w.lease_expires_at IS NULL AND w.previous_worker_id = l.worker_id)::int AS cleared
        FROM leases l JOIN work_items w ON w.id = l.work_item_id WHERE l.work_item_id LIKE 'sweep-%'`);
    expect(rows[0]).toEqual({ expired_at_expiry: ids.length, cleared: ids.length });
    const history = await people.operator.leases.history({ workItemId: ids[0]! });
    expect(history).toEqual([{ ...leases[0]!, endedAt: leases[0]!.expiresAt, outcome: "expired" }]);
    expect((await people.operator.workItems.get({ id: ids[0]! })).stage).toBe("ready");
  }, 30_000);

  it("sweepers racing reclaims: every expired lease ends exactly once, every item gets epoch 2", async ({ database, sql, people }) => {
    const { ids, leases } = await leaseAllBriefly(sql, people, "contest", 60, 6);
    await advanceClockPast(sql, leases.map((lease) => lease.expiresAt).sort().at(-1)!);
    const secondInstance = testInstance(database.url, { poolSize: 3 });
    const errors: unknown[] = [];
    const sweepers = [
      startExpirySweeper(database.db, 5, (error) => errors.push(error)),
      startExpirySweeper(secondInstance.db, 5, (error) => errors.push(error)),
    ];
    try {
      const rescuers = await Promise.all(Array.from({ length: 6 }, (_, w) => people.agent(`contest-rescuer-${w}`)));
      await Promise.all(ids.map((id, i) => rescuers[i % 6]!.leases.claim({ workItemId: id, durationSeconds: 600 })));
    } finally {
      await Promise.all(sweepers.map((sweeper) => sweeper.stop()));
      await secondInstance.close();
    }
    expect(errors).toEqual([]);
    const events = await expiredEvents(sql, "contest");
    expect(events).toHaveLength(ids.length);
    expect(events.filter((row) => row.n !== 1)).toEqual([]);
    const { rows } = await sql.query(`
      SELECT string_agg(l.outcome || '@' || l.epoch, ',' ORDER BY l.epoch) AS history, count(*)::int AS n
        FROM leases l WHERE l.work_item_id LIKE 'contest-%' GROUP BY l.work_item_id`);
    expect(rows).toHaveLength(ids.length);
    // string_agg skips the NULL outcome of the live epoch-2 lease.
    expect(rows.every((row) => row.n === 2 && row.history === "expired@1")).toBe(true);
  }, 30_000);
});
