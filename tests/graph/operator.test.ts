import { describe, expect } from "vitest";
import { claimAndRelease, claimNext, expectStages, refused, graphTest, expectUnchanged } from "./support";
import { advanceClockPast } from "../support/fixtures";

const it = graphTest({ poolSize: 5 });

describe("workItems.cancel (operator)", () => {
  it("refuses a live lease with ITEM_LEASED and changes nothing; an expired one does not stop it", async ({ actors, sql: client }) => {
    const { operator } = actors;
    const worker = await actors.agent("holder");
    await operator.workItems.create({ id: "held", title: "Held" });
    await operator.workItems.create({ id: "lapsed", title: "Lapsed" });
    const lease = await claimNext(worker, "held");
    await expectUnchanged(client, () => operator.workItems.cancel({ id: "held", reason: "pre-empt?" }), {
      reason: "ITEM_LEASED",
      detail: { workItemId: "held", leaseId: lease.lease.id, workerId: "holder" },
    });
    expect((await operator.workItems.get({ id: "held" })).currentLease).toMatchObject({ id: lease.lease.id, endedAt: null });
    await worker.leases.renew({ leaseId: lease.lease.id, epoch: 1 });

    const short = await claimNext(worker, "lapsed", 1);
    await advanceClockPast(client, short.lease.expiresAt);
    const cancelled = await operator.workItems.cancel({ id: "lapsed", reason: "abandoned" });
    expect(cancelled).toMatchObject({ status: "cancelled", stage: "cancelled", currentLease: null });
    expect(await operator.leases.history({ workItemId: "lapsed" })).toMatchObject([{ epoch: 1, outcome: "expired", endedAt: short.lease.expiresAt }]);
  });

  it("cancels the open subtree; refuses if any descendant is leased; ALREADY_TERMINAL on a terminal item", async ({ actors, sql: client }) => {
    const { operator } = actors;
    const worker = await actors.agent("w");
    await operator.workItems.create({ id: "root", title: "Root" });
    await operator.workItems.create({ id: "c1", title: "C1", parentId: "root" });
    await operator.workItems.create({ id: "c1g", title: "C1 grandchild", parentId: "c1" });
    await operator.workItems.create({ id: "c2", title: "C2", parentId: "root" });
    await operator.workItems.create({ id: "c3", title: "C3", parentId: "root" });
    await claimAndRelease(worker, "c3");
    const leased = (await worker.leases.claim({ workItemId: "c1g" }))!;

    await expectUnchanged(client, () => operator.workItems.cancel({ id: "root", reason: "scrap" }), { reason: "ITEM_LEASED", detail: { workItemId: "c1g" } });
    await expectStages(actors, { root: "waiting_on_children", c1: "waiting_on_children", c1g: "leased", c2: "ready", c3: "released" }, ["c2"]);

    await worker.leases.release({ leaseId: leased.lease.id, epoch: 1, evidence: "done" });
    const cancelled = await operator.workItems.cancel({ id: "root", reason: "scrap" });
    expect(cancelled).toMatchObject({ status: "cancelled", stage: "cancelled", openChildCount: 0 });
    await expectStages(actors, { root: "cancelled", c1: "cancelled", c1g: "released", c2: "cancelled", c3: "released" }, []);
    const events = await operator.events.list({ workItemId: "c2" });
    expect(events.items.at(-1)).toMatchObject({ type: "work_item.status_changed", data: { to: "cancelled", cascadedFrom: "root" } });

    await expectUnchanged(client, () => operator.workItems.cancel({ id: "root", reason: "again" }), { reason: "ALREADY_TERMINAL" });
    await expectUnchanged(client, () => operator.workItems.cancel({ id: "c3", reason: "released already" }), { reason: "ALREADY_TERMINAL" });
    await expectUnchanged(client, () => operator.workItems.cancel({ id: "ghost", reason: "?" }), { reason: "NOT_FOUND" });
    expect(await refused(worker.workItems.cancel({ id: "c2", reason: "agents cannot" }))).toMatchObject({ reason: "FORBIDDEN" });
  });

  it("cancels open descendants below a released child (created under it while it was leased)", async ({ actors }) => {
    const { operator } = actors;
    const worker = await actors.agent("w");
    await operator.workItems.create({ id: "g", title: "G" });
    await operator.workItems.create({ id: "p", title: "P", parentId: "g" });
    await operator.workItems.create({ id: "other", title: "Depends on C" });
    const leased = await claimNext(worker, "p");
    await operator.workItems.create({ id: "c", title: "C", parentId: "p" });
    await operator.workItems.create({ id: "cc", title: "under C", parentId: "c" });
    await operator.workItems.addDependency({ workItemId: "other", dependsOnId: "c" });
    await worker.leases.release({ leaseId: leased.lease.id, epoch: 1, evidence: "done, C is left" });
    await expectStages(actors, { g: "ready", p: "released", c: "waiting_on_children", cc: "ready", other: "blocked" }, ["g", "cc"]);

    await operator.workItems.cancel({ id: "g", reason: "scrap" });
    await expectStages(actors, { g: "cancelled", p: "released", c: "cancelled", cc: "cancelled", other: "ready" }, ["other"]);
    const events = await operator.events.list({ workItemId: "cc" });
    expect(events.items.at(-1)).toMatchObject({ type: "work_item.status_changed", data: { to: "cancelled", cascadedFrom: "g" } });
  });

  it("dependents of a cancelled item (and their subtrees) become ready", async ({ actors }) => {
    const { operator } = actors;
    await operator.workItems.create({ id: "doomed", title: "Doomed" });
    await operator.workItems.create({ id: "doomed.child", title: "Doomed child", parentId: "doomed" });
    await operator.workItems.create({ id: "dep1", title: "Dep 1", dependsOn: ["doomed"] });
    await operator.workItems.create({ id: "dep2", title: "Dep 2", dependsOn: ["doomed.child"] });
    await operator.workItems.create({ id: "dep1.child", title: "Dep 1 child", parentId: "dep1" });
    await expectStages(actors, { doomed: "waiting_on_children", "doomed.child": "ready", dep1: "waiting_on_children", dep2: "blocked", "dep1.child": "blocked" });
    await operator.workItems.cancel({ id: "doomed", reason: "no longer needed" });
    await expectStages(actors, { doomed: "cancelled", "doomed.child": "cancelled", dep1: "waiting_on_children", dep2: "ready", "dep1.child": "ready" }, ["dep2", "dep1.child"]);
  });
});

describe("workItems.setPriority and workItems.move (operator)", () => {
  it("setPriority reorders the queue and next-claim, without pre-empting a lease", async ({ actors }) => {
    const { operator } = actors;
    const worker = await actors.agent("w");
    for (const id of ["p1", "p2", "p3", "p4"]) await operator.workItems.create({ id, title: id });
    await expectStages(actors, { p1: "ready", p2: "ready", p3: "ready", p4: "ready" }, ["p1", "p2", "p3", "p4"]);
    expect((await operator.workItems.setPriority({ id: "p3", priority: 5 })).priority).toBe(5);
    await operator.workItems.setPriority({ id: "p1", priority: -1 });
    await expectStages(actors, { p1: "ready" }, ["p3", "p2", "p4", "p1"]);
    const lease = await claimNext(worker, "p3");
    // Re-prioritising a leased item, or making another item more urgent, leaves the lease alone.
    await operator.workItems.setPriority({ id: "p3", priority: -5 });
    await operator.workItems.setPriority({ id: "p1", priority: 100 });
    expect((await operator.workItems.get({ id: "p3" })).currentLease).toMatchObject({ id: lease.lease.id, endedAt: null });
    await expectStages(actors, { p3: "leased" }, ["p1", "p2", "p4"]);
    await claimNext(worker, "p1");
    await worker.leases.release({ leaseId: lease.lease.id, epoch: 1, evidence: "done" });
    expect(await refused(operator.workItems.setPriority({ id: "p3", priority: 1 }))).toMatchObject({ reason: "ALREADY_TERMINAL" });
    expect(await refused(worker.workItems.setPriority({ id: "p2", priority: 1 }))).toMatchObject({ reason: "FORBIDDEN" });
  });

  it("move reparents (carrying the subtree) and detaches", async ({ actors, sql: client }) => {
    const { operator } = actors;
    const worker = await actors.agent("w");
    await operator.workItems.create({ id: "home", title: "Home" });
    await operator.workItems.create({ id: "x", title: "X" });
    await operator.workItems.create({ id: "x.kid", title: "X kid", parentId: "x" });
    const moved = await operator.workItems.move({ id: "x", parentId: "home" });
    expect(moved).toMatchObject({ id: "x", parentId: "home", stage: "waiting_on_children" });
    expect((await operator.workItems.get({ id: "x.kid" })).parentId).toBe("x");
    expect((await operator.workItems.list({ parentId: "home" })).items.map((item) => item.id)).toEqual(["x"]);
    let items = await expectStages(actors, { home: "waiting_on_children", x: "waiting_on_children", "x.kid": "ready" }, ["x.kid"]);
    expect(items.get("home")!.openChildCount).toBe(1);

    const detached = await operator.workItems.move({ id: "x", parentId: null });
    expect(detached.parentId).toBeNull();
    items = await expectStages(actors, { home: "ready", x: "waiting_on_children", "x.kid": "ready" }, ["home", "x.kid"]);
    expect(items.get("home")!.openChildCount).toBe(0);
    expect((await operator.workItems.list({ parentId: "home" })).items).toEqual([]);

    // A terminal item may be moved (it does not count as an open child); nothing moves under a terminal parent.
    await claimAndRelease(worker, "x.kid");
    await operator.workItems.move({ id: "x.kid", parentId: "home" });
    await expectStages(actors, { home: "ready", x: "ready", "x.kid": "released" }, ["home", "x"]);
    await expectUnchanged(client, () => operator.workItems.move({ id: "x", parentId: "x.kid" }), { reason: "ALREADY_TERMINAL" });
    await expectUnchanged(client, () => operator.workItems.move({ id: "x", parentId: "ghost" }), { reason: "NOT_FOUND" });
    await expectUnchanged(client, () => operator.workItems.move({ id: "ghost", parentId: null }), { reason: "NOT_FOUND" });
    expect(await refused(worker.workItems.move({ id: "x", parentId: "home" }))).toMatchObject({ reason: "FORBIDDEN" });
    // Moving a leased item does not pre-empt it.
    const lease = await claimNext(worker, "home");
    await operator.workItems.move({ id: "home", parentId: "x" });
    await expectStages(actors, { home: "leased", x: "waiting_on_children" }, []);
    expect((await operator.workItems.get({ id: "home" })).currentLease).toMatchObject({ id: lease.lease.id, endedAt: null });
  });
});
