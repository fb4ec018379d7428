import { describe, expect } from "vitest";
import { advanceClockPast, databaseTest, refusal } from "../support/fixtures";
import { scopedToken, setPolicy } from "./support";

const it = databaseTest({ scope: "test" });

describe("claims route by project, capabilities and time gates (rules 12, 13, 15)", () => {
  it("a next claim takes only items whose requires are all among the token's capabilities, in queue order", async ({ database, sql, people }) => {
    await people.operator.workItems.create({ id: "gpu-first", title: "needs a gpu", priority: 9 });
    await people.operator.workItems.create({ id: "gpu-browser", title: "needs both", priority: 8 });
    await people.operator.workItems.create({ id: "plain", title: "needs nothing", priority: 1 });
    await setPolicy(sql, ["gpu-first"], { requires: ["gpu"] });
    await setPolicy(sql, ["gpu-browser"], { requires: ["gpu", "browser"] });
    const plainAgent = await scopedToken(database.instance, sql, "agent", { workerId: "plain-worker" });
    const gpuAgent = await scopedToken(database.instance, sql, "agent", { workerId: "gpu-worker", capabilities: ["gpu"] });

    expect((await plainAgent.api.leases.claim({}))?.workItem.id).toBe("plain");
    expect((await gpuAgent.api.leases.claim({}))?.workItem.id).toBe("gpu-first");
    // gpu-browser needs a browser too: nobody here can take it.
    expect(await gpuAgent.api.leases.claim({})).toBeNull();
    expect(await plainAgent.api.leases.claim({})).toBeNull();
  });

  it("a claim's capabilities must be a subset of the token's (FORBIDDEN) and narrow what it takes", async ({ database, sql, people }) => {
    await people.operator.workItems.create({ id: "gpu-job", title: "needs a gpu", priority: 5 });
    await people.operator.workItems.create({ id: "plain-job", title: "needs nothing" });
    await setPolicy(sql, ["gpu-job"], { requires: ["gpu"] });
    const agent = await scopedToken(database.instance, sql, "agent", { workerId: "w", capabilities: ["gpu"] });

    expect(await refusal(agent.api.leases.claim({ capabilities: ["gpu", "prod"] }))).toMatchObject({ reason: "FORBIDDEN" });
    expect((await agent.api.leases.claim({ capabilities: [] }))?.workItem.id).toBe("plain-job");
    expect((await agent.api.leases.claim({ capabilities: ["gpu"] }))?.workItem.id).toBe("gpu-job");
  });

  it("an admin claiming for a worker defaults to the union of that worker's unrevoked agent tokens' capabilities", async ({ database, sql, people }) => {
    await people.operator.workItems.create({ id: "needs-both", title: "gpu and browser" });
    await setPolicy(sql, ["needs-both"], { requires: ["gpu", "browser"] });
    await scopedToken(database.instance, sql, "agent", { workerId: "multi", capabilities: ["gpu"] });
    await scopedToken(database.instance, sql, "agent", { workerId: "multi", capabilities: ["browser"] });
    const revoked = await scopedToken(database.instance, sql, "agent", { workerId: "other", capabilities: ["gpu", "browser"] });
    await sql.query("UPDATE api_tokens SET revoked_at = work_graph_clock() WHERE worker_id = 'other'");
    void revoked;

    expect(await people.admin.leases.claim({ workerId: "other" })).toBeNull();
    expect((await people.admin.leases.claim({ workerId: "multi" }))?.workItem.id).toBe("needs-both");
  });

  it("a named claim of an item whose requires the claim lacks: NOT_CLAIMABLE with stage ready and what is missing", async ({ database, sql, people }) => {
    await people.operator.workItems.create({ id: "special", title: "needs gpu and prod" });
    await setPolicy(sql, ["special"], { requires: ["gpu", "prod"] });
    const agent = await scopedToken(database.instance, sql, "agent", { workerId: "w", capabilities: ["gpu"] });

    const refused = await refusal(agent.api.leases.claim({ workItemId: "special" }));
    expect(refused).toMatchObject({ reason: "NOT_CLAIMABLE", detail: { stage: "ready", missing: ["prod"] } });
    expect((await sql.query("SELECT count(*)::int AS n FROM leases")).rows[0].n).toBe(0);
    expect((await people.admin.leases.claim({ workerId: "w", workItemId: "special", capabilities: ["gpu", "prod"] }))?.workItem.id).toBe("special");
  });

  it("projects: a scoped token takes only its projects' items; projectId narrows; another project's item is NOT_FOUND", async ({ database, sql, people }) => {
    await people.operator.workItems.create({ id: "alpha-1", title: "alpha", priority: 9 });
    await people.operator.workItems.create({ id: "beta-1", title: "beta", priority: 5 });
    await people.operator.workItems.create({ id: "default-1", title: "default", priority: 1 });
    await setPolicy(sql, ["alpha-1"], { projectId: "alpha" });
    await setPolicy(sql, ["beta-1"], { projectId: "beta" });
    const betaAgent = await scopedToken(database.instance, sql, "agent", { workerId: "beta-worker", projects: ["beta"] });
    const anyAgent = await scopedToken(database.instance, sql, "agent", { workerId: "any-worker" });

    expect(await refusal(betaAgent.api.leases.claim({ workItemId: "alpha-1" }))).toMatchObject({ reason: "NOT_FOUND" });
    expect(await betaAgent.api.leases.claim({ projectId: "alpha" })).toBeNull();
    expect((await anyAgent.api.leases.claim({ projectId: "default" }))?.workItem.id).toBe("default-1");
    expect((await betaAgent.api.leases.claim({}))?.workItem.id).toBe("beta-1");
    expect((await anyAgent.api.leases.claim({}))?.workItem.id).toBe("alpha-1");
  });

  it("time gates: a next claim passes over a scheduled item; a named claim says when it opens", async ({ database, sql, people }) => {
    await people.operator.workItems.create({ id: "later", title: "not yet", priority: 9 });
    await people.operator.workItems.create({ id: "now", title: "now" });
    await setPolicy(sql, ["later"], { notBeforeInSeconds: 3600 });
    const agent = await scopedToken(database.instance, sql, "agent", { workerId: "w" });

    const refused = await refusal(agent.api.leases.claim({ workItemId: "later" }));
    const { rows } = await sql.query<{ notBefore: Date }>(`SELECT not_before AS "notBefore" FROM work_items WHERE id = 'later'`);
    expect(refused).toMatchObject({ reason: "NOT_CLAIMABLE", detail: { stage: "scheduled" } });
    expect(new Date(refused.detail.notBefore as string).getTime()).toBe(rows[0]!.notBefore.getTime());
    expect((await agent.api.leases.claim({}))?.workItem.id).toBe("now");
    expect(await agent.api.leases.claim({})).toBeNull();

    await advanceClockPast(sql, rows[0]!.notBefore.toISOString());
    expect((await agent.api.leases.claim({}))?.workItem.id).toBe("later");
  });

  it("the same routing holds in the transaction paths (an idempotency key)", async ({ database, sql, people }) => {
    await people.operator.workItems.create({ id: "gated", title: "gated", priority: 9 });
    await people.operator.workItems.create({ id: "gpu", title: "gpu", priority: 8 });
    await people.operator.workItems.create({ id: "open", title: "open" });
    await setPolicy(sql, ["gated"], { notBeforeInSeconds: 3600 });
    await setPolicy(sql, ["gpu"], { requires: ["gpu"] });
    const agent = await scopedToken(database.instance, sql, "agent", { workerId: "w" });
    expect((await agent.api.leases.claim({ idempotencyKey: "k1" }))?.workItem.id).toBe("open");
    expect(await agent.api.leases.claim({ idempotencyKey: "k2" })).toBeNull();
  });
});
