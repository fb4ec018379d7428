import { describe, expect } from "vitest";
import { databaseTest, refusal } from "../support/fixtures";
import { scopedCaller } from "./support";

/* workItems.create's queue-policy fields, inheritance by children, and workItems.update (docs/api.md "Queue policy"). */

const it = databaseTest();

describe("workItems.create fields", () => {
  it("defaults: project default, no requires, key, gate or external id", async ({ people }) => {
    const item = await people.operator.workItems.create({ id: "plain", title: "Plain" });
    expect(item).toMatchObject({ projectId: "default", requires: [], concurrencyKey: null, notBefore: null, externalId: null, stage: "ready" });
  });

  it("takes project, requires (sorted, unique), key, notBefore and externalId", async ({ people }) => {
    await people.admin.projects.create({ id: "fields", name: "Fields" });
    const notBefore = "2099-01-01T00:00:00.000Z";
    const item = await people.operator.workItems.create({
      id: "full", title: "Full", projectId: "fields", requires: ["gpu", "browser", "gpu"], concurrencyKey: "staging-db",
      notBefore: "2099-01-01T01:00:00+01:00", externalId: "gh:1",
    });
    expect(item).toMatchObject({ projectId: "fields", requires: ["browser", "gpu"], concurrencyKey: "staging-db", notBefore, externalId: "gh:1", stage: "scheduled" });
    const listed = await people.operator.workItems.list({ projectId: "fields", externalId: "gh:1" });
    expect(listed.items.map((i) => i.id)).toEqual(["full"]);
  });

  it("delaySeconds counts from database now; both gates, an unknown project and a taken externalId are refused", async ({ sql, people }) => {
    const before = (await sql.query<{ now: Date }>("SELECT work_graph_clock() AS now")).rows[0]!.now.getTime();
    const item = await people.operator.workItems.create({ id: "delayed", title: "Delayed", delaySeconds: 3600, externalId: "dup" });
    const after = (await sql.query<{ now: Date }>("SELECT work_graph_clock() AS now")).rows[0]!.now.getTime();
    expect(Date.parse(item.notBefore!)).toBeGreaterThanOrEqual(before + 3_600_000 - 1);
    expect(Date.parse(item.notBefore!)).toBeLessThanOrEqual(after + 3_600_000);
    expect(item.stage).toBe("scheduled");

    expect((await refusal(people.operator.workItems.create({ title: "Both", notBefore: "2099-01-01T00:00:00Z", delaySeconds: 5 }))).reason).toBe("VALIDATION");
    expect(await refusal(people.operator.workItems.create({ title: "Nowhere", projectId: "nowhere" }))).toMatchObject({ reason: "NOT_FOUND", detail: { id: "nowhere" } });
    expect(await refusal(people.operator.workItems.create({ title: "Again", externalId: "dup" }))).toMatchObject({ reason: "DUPLICATE", detail: { externalId: "dup" } });
    await expect(people.operator.workItems.create({ title: "No offset", notBefore: "2099-01-01T00:00:00" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(people.operator.workItems.create({ title: "Too far", delaySeconds: 31_536_001 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect((await sql.query("SELECT 1 FROM work_items WHERE title IN ('Both', 'Nowhere', 'Again')")).rowCount).toBe(0);
  });

  it("a child is in its parent's project and inherits requires and key unless given; another project is VALIDATION", async ({ people }) => {
    await people.admin.projects.create({ id: "kids", name: "Kids" });
    await people.operator.workItems.create({ id: "kid-parent", title: "Parent", projectId: "kids", requires: ["gpu"], concurrencyKey: "k1" });
    const child = await people.operator.workItems.create({ id: "kid-1", title: "Child", parentId: "kid-parent" });
    expect(child).toMatchObject({ projectId: "kids", requires: ["gpu"], concurrencyKey: "k1" });
    const own = await people.operator.workItems.create({ id: "kid-2", title: "Own", parentId: "kid-parent", projectId: "kids", requires: [], concurrencyKey: "k2" });
    expect(own).toMatchObject({ projectId: "kids", requires: [], concurrencyKey: "k2" });
    const cleared = await people.operator.workItems.create({ id: "kid-3", title: "Unkeyed", parentId: "kid-parent", concurrencyKey: null });
    expect(cleared).toMatchObject({ projectId: "kids", requires: ["gpu"], concurrencyKey: null });
    expect(await refusal(people.operator.workItems.create({ title: "Elsewhere", parentId: "kid-parent", projectId: "default" }))).toMatchObject({
      reason: "VALIDATION", detail: { projectId: "default", parentProjectId: "kids" },
    });
  });

  it("decomposition children inherit requires and key and take their own fields", async ({ database, people }) => {
    await people.operator.workItems.create({ id: "dec-parent", title: "Parent", requires: ["browser"], concurrencyKey: "ci" });
    const agent = await scopedCaller(database.instance, people, { role: "agent", workerId: "dec-w", capabilities: ["browser"] });
    const { lease } = (await agent.leases.claim({ workItemId: "dec-parent", durationSeconds: 300 }))!;
    const result = await agent.leases.decompose({
      leaseId: lease.id, epoch: lease.epoch,
      children: [
        { id: "dec-a", title: "A" },
        { id: "dec-b", title: "B", requires: ["gpu"], concurrencyKey: null, delaySeconds: 600 },
      ],
    });
    expect(result.children.map(({ id, requires, concurrencyKey, stage }) => ({ id, requires, concurrencyKey, stage }))).toEqual([
      { id: "dec-a", requires: ["browser"], concurrencyKey: "ci", stage: "ready" },
      { id: "dec-b", requires: ["gpu"], concurrencyKey: null, stage: "scheduled" },
    ]);
  });
});

describe("workItems.update", () => {
  it("changes fields, writes work_item.updated, clears with null; a terminal item is ALREADY_TERMINAL", async ({ people }) => {
    await people.operator.workItems.create({ id: "upd", title: "Old", notBefore: "2099-01-01T00:00:00Z", concurrencyKey: "k" });
    const updated = await people.operator.workItems.update({ id: "upd", title: "New", requires: ["b", "a"], notBefore: null, concurrencyKey: null });
    expect(updated).toMatchObject({ title: "New", requires: ["a", "b"], notBefore: null, concurrencyKey: null, stage: "ready" });
    const events = await people.operator.events.list({ workItemId: "upd" });
    expect(events.items.at(-1)).toMatchObject({ type: "work_item.updated", data: { title: "New", requires: ["a", "b"], notBefore: null, concurrencyKey: null } });

    await people.operator.workItems.cancel({ id: "upd", reason: "gone" });
    expect((await refusal(people.operator.workItems.update({ id: "upd", title: "Late" }))).reason).toBe("ALREADY_TERMINAL");
    expect(await refusal(people.operator.workItems.update({ id: "missing", title: "x" }))).toMatchObject({ reason: "NOT_FOUND", detail: { id: "missing" } });
    expect((await refusal((await people.agent("upd-agent")).workItems.update({ id: "upd", title: "x" }))).reason).toBe("FORBIDDEN");
  });

  it("never pre-empts a live lease: the lease stays, keeps the key it was claimed under, and the item stays leased", async ({ sql, people }) => {
    await people.operator.workItems.create({ id: "upd-leased", title: "Leased", concurrencyKey: "old-key" });
    const worker = await people.agent("upd-w");
    const { lease } = (await worker.leases.claim({ workItemId: "upd-leased", durationSeconds: 300 }))!;
    const keyClaimedUnder = (await sql.query("SELECT concurrency_key FROM leases WHERE id = $1", [lease.id])).rows[0].concurrency_key;
    const updated = await people.operator.workItems.update({ id: "upd-leased", concurrencyKey: "new-key", notBefore: "2099-01-01T00:00:00Z", requires: ["gpu"] });
    expect(updated).toMatchObject({ stage: "leased", concurrencyKey: "new-key", currentLease: { id: lease.id, endedAt: null } });
    expect((await sql.query("SELECT concurrency_key FROM leases WHERE id = $1", [lease.id])).rows[0].concurrency_key).toBe(keyClaimedUnder);
    await worker.leases.renew({ leaseId: lease.id, epoch: lease.epoch, durationSeconds: 300 });
  });
});
