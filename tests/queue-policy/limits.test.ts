import { describe, expect } from "vitest";
import { callerAs } from "../support/app";
import { databaseTest, refusal } from "../support/fixtures";
import { scrape } from "../observability/support";
import { setPolicy } from "./support";

// Gauges read fresh on every scrape.
process.env.WORK_GRAPH_METRICS_CACHE_MS = "0";

const it = databaseTest({ scope: "test" });

describe("limits.* and rule 14 for single callers", () => {
  it("set, list and delete a limit; live leases counted; operators only; bad input refused", async ({ people, sql }) => {
    const agent = await people.agent("limited-worker");
    await people.operator.workItems.create({ id: "keyed", title: "Keyed" });
    await setPolicy(sql, ["keyed"], { concurrencyKey: "staging" });
    await agent.leases.claim({ workItemId: "keyed" });

    const set = await people.operator.limits.set({ key: "staging", maxLeases: 2 });
    expect(set).toMatchObject({ key: "staging", maxLeases: 2, liveLeases: 1 });
    expect(Date.parse(set.updatedAt)).not.toBeNaN();
    await people.operator.limits.set({ key: "api/github", maxLeases: 5 });
    expect((await agent.limits.list({})).map(({ key, maxLeases, liveLeases }) => ({ key, maxLeases, liveLeases }))).toEqual([
      { key: "api/github", maxLeases: 5, liveLeases: 0 },
      { key: "staging", maxLeases: 2, liveLeases: 1 },
    ]);
    expect(await people.operator.limits.delete({ key: "api/github" })).toEqual({ key: "api/github" });
    expect((await people.operator.limits.list({})).map((limit) => limit.key)).toEqual(["staging"]);

    expect((await refusal(agent.limits.set({ key: "staging", maxLeases: 9 }))).reason).toBe("FORBIDDEN");
    expect((await refusal(agent.limits.delete({ key: "staging" }))).reason).toBe("FORBIDDEN");
    // Deleting is idempotent: a key that never had a limit is unlimited already.
    expect(await people.operator.limits.delete({ key: "never-set" })).toEqual({ key: "never-set" });
    expect((await people.operator.limits.list({})).map((limit) => limit.key)).not.toContain("never-set");
    for (const bad of [{ key: "Staging", maxLeases: 1 }, { key: "staging", maxLeases: 10_001 }, { key: "staging", maxLeases: -1 }, { key: "staging", maxLeases: 1.5 }]) {
      await expect(people.operator.limits.set(bad)).rejects.toMatchObject({ code: "BAD_REQUEST" });
    }
    expect((await people.operator.limits.list({}))[0]).toMatchObject({ key: "staging", maxLeases: 2 });
  });

  it("maxLeases 0 pauses a key: next claims pass over its items, a named claim is LIMIT_REACHED with the key's numbers", async ({ people, sql }) => {
    const agent = await people.agent("pause-worker");
    await people.operator.workItems.create({ id: "paused-item", title: "Paused", priority: 9 });
    await people.operator.workItems.create({ id: "free-item", title: "Free" });
    await setPolicy(sql, ["paused-item"], { concurrencyKey: "deploys" });
    await people.operator.limits.set({ key: "deploys", maxLeases: 0 });

    expect(await refusal(agent.leases.claim({ workItemId: "paused-item" }))).toMatchObject({
      reason: "LIMIT_REACHED",
      detail: { key: "deploys", maxLeases: 0, liveLeases: 0 },
    });
    expect((await agent.leases.claim({}))?.workItem.id).toBe("free-item");
    expect(await agent.leases.claim({})).toBeNull();
    expect(await agent.leases.claim({ idempotencyKey: "paused-probe" })).toBeNull();
    await people.operator.limits.set({ key: "deploys", maxLeases: 1 });
    const claimed = await agent.leases.claim({});
    expect(claimed?.workItem.id).toBe("paused-item");
    // The lease records the key the item had when it was claimed.
    expect((await sql.query("SELECT concurrency_key FROM leases WHERE id = $1", [claimed!.lease.id])).rows[0].concurrency_key).toBe("deploys");
  });

  it("lowering a limit ends no lease; claims wait until the live count is below it; an unlimited key is not limited", async ({ people, sql }) => {
    const workers = await Promise.all(["low-a", "low-b", "low-c", "low-d"].map((id) => people.agent(id)));
    const ids = ["low-1", "low-2", "low-3", "low-4", "low-5"];
    for (const id of ids) await people.operator.workItems.create({ id, title: id });
    await setPolicy(sql, ids, { concurrencyKey: "shared" });
    // No limit: any number of leases on the key.
    const held = [];
    for (const worker of workers.slice(0, 3)) held.push((await worker.leases.claim({}))!);
    await people.operator.limits.set({ key: "shared", maxLeases: 3 });
    expect(await workers[3]!.leases.claim({})).toBeNull();

    const lowered = await people.operator.limits.set({ key: "shared", maxLeases: 1 });
    expect(lowered).toMatchObject({ maxLeases: 1, liveLeases: 3 });
    expect((await sql.query("SELECT count(*)::int AS n FROM leases WHERE ended_at IS NULL")).rows[0].n).toBe(3);
    await workers[0]!.leases.release({ leaseId: held[0]!.lease.id, epoch: held[0]!.lease.epoch, evidence: "done" });
    await workers[1]!.leases.release({ leaseId: held[1]!.lease.id, epoch: held[1]!.lease.epoch, evidence: "done" });
    expect(await workers[3]!.leases.claim({})).toBeNull(); // one live lease: at the limit of 1
    await workers[2]!.leases.release({ leaseId: held[2]!.lease.id, epoch: held[2]!.lease.epoch, evidence: "done" });
    expect(await workers[3]!.leases.claim({})).not.toBeNull();
  });

  it("a lease keeps counting toward the key its item had at claim, after the item's key changes", async ({ people, sql }) => {
    const agent = await people.agent("key-mover");
    const other = await people.agent("key-follower");
    await people.operator.workItems.create({ id: "moved-key", title: "Moved", priority: 2 });
    await people.operator.workItems.create({ id: "same-key", title: "Same", priority: 1 });
    await setPolicy(sql, ["moved-key", "same-key"], { concurrencyKey: "k1" });
    await people.operator.limits.set({ key: "k1", maxLeases: 1 });
    expect((await agent.leases.claim({}))?.workItem.id).toBe("moved-key");
    await setPolicy(sql, ["moved-key"], { concurrencyKey: "k2" });
    expect(await other.leases.claim({})).toBeNull();
    expect((await refusal(other.leases.claim({ workItemId: "same-key" }))).detail).toMatchObject({ key: "k1", maxLeases: 1, liveLeases: 1 });
  });

  it("metrics: work_graph_limit_live_leases{key} only for keys with a limit, and returned among the outcome labels", async ({ database, people, sql, server }) => {
    const agent = await people.agent("metrics-limits");
    await people.operator.workItems.create({ id: "m-keyed", title: "Keyed" });
    await people.operator.workItems.create({ id: "m-unlimited", title: "Unlimited key" });
    await setPolicy(sql, ["m-keyed"], { concurrencyKey: "metered" });
    await setPolicy(sql, ["m-unlimited"], { concurrencyKey: "free-for-all" });
    await people.operator.limits.set({ key: "metered", maxLeases: 4 });
    await agent.leases.claim({ workItemId: "m-keyed" });
    await agent.leases.claim({ workItemId: "m-unlimited" });
    const { token } = await callerAs(database.instance, "operator");

    const scraped = await scrape(server.url, token);
    const family = scraped.families.find((candidate) => candidate.name === "work_graph_limit_live_leases")!;
    expect(family.metrics.map((metric) => [metric.labels?.key, Number(metric.value)])).toEqual([["metered", 1]]);
    const ended = scraped.families.find((candidate) => candidate.name === "work_graph_leases_ended_total")!;
    expect(ended.metrics.some((metric) => metric.labels?.outcome === "returned")).toBe(true);

    await people.operator.limits.delete({ key: "metered" });
    const after = await scrape(server.url, token);
    expect(after.families.find((candidate) => candidate.name === "work_graph_limit_live_leases")?.metrics ?? []).toEqual([]);
  });
});
