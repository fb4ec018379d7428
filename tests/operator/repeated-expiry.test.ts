import type pg from "pg";
import { describe, expect, vi } from "vitest";
import { sweepExpiredLeases } from "../../server/operations/sweep";
import { actors, refusal, advanceClockPast, databaseTest } from "../support/fixtures";
import { settle } from "./support";

/*
 * Rule 11: the WORK_GRAPH_MAX_EXPIRIES-th (default 3) consecutive expired lease of an item
 * since its last attention request opens a blocking help request from work-graph, once.
 */

const it = databaseTest();

type Agent = Awaited<ReturnType<Awaited<ReturnType<typeof actors>>["agent"]>>;

/** Each worker in turn claims the item for 1 s and lets it lapse; returns the lapsed leases (the last one not yet recorded). */
async function lapse(sql: pg.Client, item: string, workers: Agent[]) {
  const leases = [];
  for (const worker of workers) {
    const { lease } = (await worker.leases.claim({ workItemId: item, durationSeconds: 1 }))!;
    await advanceClockPast(sql, lease.expiresAt);
    leases.push(lease);
  }
  return leases;
}

const systemRequests = async (sql: pg.Client, item: string) =>
  (await sql.query("SELECT * FROM attention_requests WHERE work_item_id = $1 AND worker_id = 'work-graph' ORDER BY created_at", [item])).rows;

describe("rule 11: repeated expiry goes to a person", () => {
  it("the third expiry, recorded by the sweep, opens one blocking help request naming the workers; the item needs attention", async ({ database, people, sql }) => {
    const { operator, agent } = people;
    const workers = [await agent("poison-a"), await agent("poison-b"), await agent("poison-a")];
    await operator.workItems.create({ id: "poison-sweep", title: "A poison item" });
    const leases = await lapse(sql, "poison-sweep", workers);
    expect(await systemRequests(sql, "poison-sweep")).toHaveLength(0); // two expiries recorded by reclaims: not yet
    await sweepExpiredLeases(database.db);

    const [request] = await systemRequests(sql, "poison-sweep");
    expect(request).toMatchObject({
      kind: "help", worker_id: "work-graph", blocking: true, status: "open", options: ["retry", "cancel"], lease_id: leases[2]!.id,
    });
    expect(request.question).toContain("poison-a");
    expect(request.question).toContain("poison-b");
    expect(request.question).toContain("poison-sweep");
    const item = await operator.workItems.get({ id: "poison-sweep" });
    expect(item.stage).toBe("needs_attention");
    const history = await operator.leases.history({ workItemId: "poison-sweep" });
    expect(history.map((lease) => lease.outcome)).toEqual(["expired", "expired", "expired"]);
    const events = (await operator.events.list({ workItemId: "poison-sweep" })).items.filter((event) => event.type === "attention.requested");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: "work-graph", leaseId: leases[2]!.id, epoch: 3, data: { requestId: request.id, kind: "help", blocking: true } });
    // Nobody can claim it until a person answers; the inbox has it.
    expect((await refusal(workers[0]!.leases.claim({ workItemId: "poison-sweep", durationSeconds: 60 }))).detail.stage).toBe("needs_attention");
    const inbox = await operator.attention.list({ status: "open", workItemId: "poison-sweep" });
    expect(inbox.items.map((entry) => entry.id)).toEqual([request.id]);

    // Answered "retry": ready again, and the count starts from zero (two more expiries are not enough).
    const resolved = await operator.attention.resolve({ id: request.id, resolution: "retry" });
    expect(resolved.workItem.stage).toBe("ready");
    await lapse(sql, "poison-sweep", [workers[0]!, workers[1]!]);
    await sweepExpiredLeases(database.db);
    expect(await systemRequests(sql, "poison-sweep")).toHaveLength(1);
    expect((await operator.workItems.get({ id: "poison-sweep" })).stage).toBe("ready");
  });

  it("recorded by a reclaim: a named claim is refused (the expiry and the request stay), a next-claim takes another item", async ({ people, sql }) => {
    const { operator, agent } = people;
    const a = await agent("reclaim-a");
    await operator.workItems.create({ id: "poison-named", title: "Named", priority: 900 });
    await operator.workItems.create({ id: "poison-next", title: "Next", priority: 800 });
    await lapse(sql, "poison-named", [a, a, a]);
    await lapse(sql, "poison-next", [a, a, a]);
    await operator.workItems.create({ id: "poison-fallback", title: "Fallback", priority: 700 });

    const named = await refusal(a.leases.claim({ workItemId: "poison-named", durationSeconds: 60 }));
    expect(named).toMatchObject({ reason: "NOT_CLAIMABLE", detail: { stage: "needs_attention" } });
    expect(await systemRequests(sql, "poison-named")).toHaveLength(1);
    expect((await operator.leases.history({ workItemId: "poison-named" })).map((lease) => lease.outcome)).toEqual(["expired", "expired", "expired"]);

    const next = await a.leases.claim({ durationSeconds: 60 });
    expect(next?.workItem.id).toBe("poison-fallback");
    expect(await systemRequests(sql, "poison-next")).toHaveLength(1);
    expect((await operator.workItems.get({ id: "poison-next" })).stage).toBe("needs_attention");
  });

  it("an attention request in between restarts the count; WORK_GRAPH_MAX_EXPIRIES=0 turns it off", async ({ database, sql, people }) => {
    const { operator, agent } = people;
    const a = await agent("streak-a");
    await operator.workItems.create({ id: "streak-broken", title: "Broken streak" });
    await lapse(sql, "streak-broken", [a, a]);
    const { lease } = (await a.leases.claim({ workItemId: "streak-broken", durationSeconds: 1 }))!;
    await a.attention.request({ leaseId: lease.id, epoch: lease.epoch, kind: "review", question: "fyi", blocking: false });
    await advanceClockPast(sql, lease.expiresAt);
    await lapse(sql, "streak-broken", [a]);
    await sweepExpiredLeases(database.db);
    // Expired: 1, 2, 3 (asked during 3), 4 → only 3 and 4 count since the request.
    expect(await systemRequests(sql, "streak-broken")).toHaveLength(0);

    vi.stubEnv("WORK_GRAPH_MAX_EXPIRIES", "0");
    await operator.workItems.create({ id: "streak-off", title: "Off" });
    await lapse(sql, "streak-off", [a, a, a, a]);
    await sweepExpiredLeases(database.db);
    expect(await systemRequests(sql, "streak-off")).toHaveLength(0);
  });

  it("the sweep and a reclaim racing for the third expiry open the request exactly once (8 items)", async ({ database, sql, people }) => {
    const { operator, agent } = people;
    const a = await agent("race-a");
    const b = await agent("race-b");
    const ids = Array.from({ length: 8 }, (_, i) => `poison-race-${i}`);
    for (const id of ids) await operator.workItems.create({ id, title: id, priority: -2000 });
    // Three rounds over all items at once, so every item's third lease lapses at about the same time.
    for (let round = 0; round < 3; round++) {
      const leases = await Promise.all(ids.map(async (id) => (await a.leases.claim({ workItemId: id, durationSeconds: 1 }))!.lease));
      // Claimed concurrently: the last to expire is not necessarily the last in the list.
      await advanceClockPast(sql, leases.map((lease) => lease.expiresAt).sort().at(-1)!);
    }
    const results = await Promise.all([
      ...ids.map((id) => settle(b.leases.claim({ workItemId: id, durationSeconds: 60 }))),
      settle(sweepExpiredLeases(database.db)),
      settle(sweepExpiredLeases(database.db)),
    ]);
    for (const claimed of results.slice(0, ids.length)) expect(claimed).toMatchObject({ ok: false, reason: "NOT_CLAIMABLE", detail: { stage: "needs_attention" } });
    for (const id of ids) {
      expect(await systemRequests(sql, id)).toHaveLength(1);
      const { rows } = await sql.query(
        "SELECT type, count(*)::int AS n FROM events WHERE work_item_id = $1 AND type IN ('attention.requested', 'lease.ended') GROUP BY type ORDER BY type", [id]);
      expect(rows).toEqual([{ type: "attention.requested", n: 1 }, { type: "lease.ended", n: 3 }]);
      const { rows: [item] } = await sql.query("SELECT blocking_attention_count, current_lease_id, last_epoch FROM work_items WHERE id = $1", [id]);
      expect(item).toEqual({ blocking_attention_count: 1, current_lease_id: null, last_epoch: 3 });
    }
  });
});
