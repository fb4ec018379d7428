import { describe, expect } from "vitest";
import { advanceClockPast } from "../support/fixtures";
import { claimAndRelease, claimNext, expectStages, graphTest, refused } from "./support";

// Each test gets its own database, and continuity (rule 9) is off (graphTest).
const it = graphTest({ poolSize: 5 });

describe("readiness rules", () => {
  it("a dependency blocks until its blocker is released or cancelled; removing it unblocks", async ({ actors }) => {
    const { operator } = actors;
    const w1 = await actors.agent("w1");
    await operator.workItems.create({ id: "a", title: "A", priority: 5 });
    await operator.workItems.create({ id: "b", title: "B", dependsOn: ["a"] });
    await operator.workItems.create({ id: "d", title: "D", priority: 1 });
    await operator.workItems.create({ id: "c", title: "C", dependsOn: ["a", "d"] });
    await operator.workItems.create({ id: "e", title: "E", dependsOn: ["b"] });
    await expectStages(actors, { a: "ready", b: "blocked", c: "blocked", d: "ready", e: "blocked" }, ["a", "d"]);

    const lease = await claimNext(w1, "a");
    await expectStages(actors, { a: "leased", b: "blocked", c: "blocked", d: "ready", e: "blocked" }, ["d"]);

    // Released at commit: the very next read sees the dependents ready.
    await w1.leases.release({ leaseId: lease.lease.id, epoch: 1, evidence: "done" });
    await expectStages(actors, { a: "released", b: "ready", c: "blocked", d: "ready", e: "blocked" }, ["d", "b"]);

    // A cancelled blocker satisfies the dependency too.
    await operator.workItems.cancel({ id: "d", reason: "not needed" });
    await expectStages(actors, { a: "released", b: "ready", c: "ready", d: "cancelled", e: "blocked" }, ["b", "c"]);

    // Removing the only open dependency unblocks the item.
    const e = await operator.workItems.removeDependency({ workItemId: "e", dependsOnId: "b" });
    expect(e.dependsOn).toEqual([]);
    expect(e.stage).toBe("ready");
    await expectStages(actors, { b: "ready", c: "ready", e: "ready" }, ["b", "c", "e"]);

    // A dependency on an already released or cancelled blocker never blocks.
    const f = await operator.workItems.create({ id: "f", title: "F", dependsOn: ["a", "d"] });
    expect(f).toMatchObject({ stage: "ready", dependsOn: ["a", "d"] });
    const b = await operator.workItems.addDependency({ workItemId: "b", dependsOnId: "d" });
    expect(b).toMatchObject({ stage: "ready", dependsOn: ["a", "d"] });
    await expectStages(actors, { b: "ready", c: "ready", e: "ready", f: "ready" }, ["b", "c", "e", "f"]);

    // An agent's own cancel of a blocker satisfies its dependents as well.
    await operator.workItems.create({ id: "g", title: "G", priority: 9 });
    await operator.workItems.addDependency({ workItemId: "f", dependsOnId: "g" });
    await expectStages(actors, { f: "blocked", g: "ready" });
    const g = await claimNext(w1, "g");
    await w1.leases.cancel({ leaseId: g.lease.id, epoch: g.lease.epoch, reason: "obsolete" });
    await expectStages(actors, { f: "ready", g: "cancelled" });
  });

  it("a dependency of a parent or grandparent blocks every descendant until it is released", async ({ actors }) => {
    const { operator } = actors;
    const w1 = await actors.agent("w1");
    await operator.workItems.create({ id: "x", title: "X", priority: 9 });
    await operator.workItems.create({ id: "y", title: "Y", priority: 8 });
    await operator.workItems.create({ id: "g", title: "Grandparent", dependsOn: ["x"] });
    await operator.workItems.create({ id: "p", title: "Parent", parentId: "g", dependsOn: ["y"] });
    await operator.workItems.create({ id: "c", title: "Grandchild", parentId: "p" });
    await operator.workItems.create({ id: "k", title: "Child", parentId: "g" });
    await expectStages(actors, { x: "ready", y: "ready", g: "waiting_on_children", p: "waiting_on_children", c: "blocked", k: "blocked" }, ["x", "y"]);

    // y only blocked p's subtree; the grandparent's dependency on x still blocks c and k.
    await claimAndRelease(w1, "y");
    await expectStages(actors, { x: "ready", g: "waiting_on_children", p: "waiting_on_children", c: "blocked", k: "blocked" }, ["x"]);

    const lease = await claimNext(w1, "x");
    await expectStages(actors, { x: "leased", c: "blocked", k: "blocked" }, []);
    await w1.leases.release({ leaseId: lease.lease.id, epoch: lease.lease.epoch, evidence: "done" });
    await expectStages(actors, { x: "released", g: "waiting_on_children", p: "waiting_on_children", c: "ready", k: "ready" }, ["c", "k"]);

    // Children terminating make their parents ready in turn (never released automatically).
    await claimAndRelease(w1, "c");
    await expectStages(actors, { g: "waiting_on_children", p: "ready", k: "ready" });
    await claimAndRelease(w1, "p");
    await claimAndRelease(w1, "k");
    await expectStages(actors, { g: "ready", p: "released", k: "released" }, ["g"]);
  });

  it("a blocker inherited along two paths blocks once and unblocks fully", async ({ actors }) => {
    const { operator } = actors;
    const w1 = await actors.agent("w1");
    await operator.workItems.create({ id: "z", title: "Z", priority: 1 });
    await operator.workItems.create({ id: "g", title: "G", dependsOn: ["z"] });
    await operator.workItems.create({ id: "p", title: "P", parentId: "g", dependsOn: ["z"] });
    await operator.workItems.create({ id: "c", title: "C", parentId: "p" });
    await operator.workItems.create({ id: "c2", title: "C2", parentId: "c" });
    await expectStages(actors, { z: "ready", g: "waiting_on_children", p: "waiting_on_children", c: "waiting_on_children", c2: "blocked" });
    // The dependency arriving later, on a grandparent of an existing subtree, blocks it too.
    await operator.workItems.create({ id: "q", title: "Q", priority: 2 });
    await operator.workItems.addDependency({ workItemId: "g", dependsOnId: "q" });
    await expectStages(actors, { z: "ready", q: "ready", c2: "blocked" }, ["q", "z"]);
    await claimAndRelease(w1, "z");
    await expectStages(actors, { q: "ready", c2: "blocked" }, ["q"]);
    await claimAndRelease(w1, "q");
    await expectStages(actors, { g: "waiting_on_children", p: "waiting_on_children", c: "waiting_on_children", c2: "ready" }, ["c2"]);
  });

  it("removing a parent's dependency unblocks its subtree; adding it back blocks it again", async ({ actors }) => {
    const { operator } = actors;
    await operator.workItems.create({ id: "x", title: "X" });
    await operator.workItems.create({ id: "p", title: "P", dependsOn: ["x"] });
    await operator.workItems.create({ id: "c", title: "C", parentId: "p" });
    await expectStages(actors, { x: "ready", p: "waiting_on_children", c: "blocked" }, ["x"]);
    await operator.workItems.removeDependency({ workItemId: "p", dependsOnId: "x" });
    await expectStages(actors, { x: "ready", p: "waiting_on_children", c: "ready" }, ["x", "c"]);
    await operator.workItems.addDependency({ workItemId: "p", dependsOnId: "x" });
    await expectStages(actors, { x: "ready", p: "waiting_on_children", c: "blocked" }, ["x"]);
    expect(await refused(operator.workItems.addDependency({ workItemId: "p", dependsOnId: "x" }))).toMatchObject({ reason: "DUPLICATE" });
    expect(await refused(operator.workItems.removeDependency({ workItemId: "c", dependsOnId: "x" }))).toMatchObject({ reason: "NOT_FOUND" });
    await expectStages(actors, { x: "ready", p: "waiting_on_children", c: "blocked" }, ["x"]);
  });

  it("moving a subtree under a blocked parent blocks it; moving it out unblocks it", async ({ actors }) => {
    const { operator } = actors;
    const w1 = await actors.agent("w1");
    await operator.workItems.create({ id: "x", title: "X", priority: 3 });
    await operator.workItems.create({ id: "b", title: "Blocked parent", dependsOn: ["x"] });
    await operator.workItems.create({ id: "s", title: "Subtree root" });
    await operator.workItems.create({ id: "sc", title: "Subtree child", parentId: "s" });
    await operator.workItems.create({ id: "q", title: "Unblocked parent" });
    await operator.workItems.create({ id: "l", title: "Leaf" });
    await expectStages(actors, { x: "ready", b: "blocked", s: "waiting_on_children", sc: "ready", q: "ready", l: "ready" }, ["x", "sc", "q", "l"]);

    const moved = await operator.workItems.move({ id: "s", parentId: "b" });
    expect(moved.parentId).toBe("b");
    await expectStages(actors, { x: "ready", b: "waiting_on_children", s: "waiting_on_children", sc: "blocked", q: "ready", l: "ready" }, ["x", "q", "l"]);
    await operator.workItems.move({ id: "l", parentId: "sc" });
    await expectStages(actors, { b: "waiting_on_children", s: "waiting_on_children", sc: "waiting_on_children", l: "blocked", q: "ready" }, ["x", "q"]);

    // Out from under the blocked parent: a different (unblocked) parent, then a root.
    await operator.workItems.move({ id: "l", parentId: "q" });
    await expectStages(actors, { sc: "blocked", l: "ready", q: "waiting_on_children" }, ["x", "l"]);
    await operator.workItems.move({ id: "s", parentId: null });
    await expectStages(actors, { x: "ready", b: "blocked", s: "waiting_on_children", sc: "ready", q: "waiting_on_children", l: "ready" }, ["x", "sc", "l"]);

    // Back under b, then the blocker is released: the whole subtree becomes ready at once.
    await operator.workItems.move({ id: "s", parentId: "b" });
    await expectStages(actors, { sc: "blocked" }, ["x", "l"]);
    await claimAndRelease(w1, "x");
    await expectStages(actors, { x: "released", b: "waiting_on_children", s: "waiting_on_children", sc: "ready" }, ["sc", "l"]);
    expect((await operator.workItems.list({ parentId: "b" })).items.map((item) => item.id)).toEqual(["s"]);
  });

  it("a dependency added to a leased item does not pre-empt it; it matters from the next claim", async ({ actors, database }) => {
    const { operator } = actors;
    const w1 = await actors.agent("w1");
    const client = await database.connect();
    await operator.workItems.create({ id: "a", title: "A", priority: 5 });
    await operator.workItems.create({ id: "b", title: "B", priority: 4 });
    await operator.workItems.create({ id: "x", title: "X" });
    const a = await claimNext(w1, "a");
    const b = await claimNext(w1, "b");

    const addedA = await operator.workItems.addDependency({ workItemId: "a", dependsOnId: "x" });
    expect(addedA.stage).toBe("leased");
    expect(addedA.currentLease).toMatchObject({ id: a.lease.id, endedAt: null });
    await operator.workItems.addDependency({ workItemId: "b", dependsOnId: "x" });
    await expectStages(actors, { a: "leased", b: "leased", x: "ready" }, ["x"]);
    // The worker carries on: renew, note and release all still work.
    await w1.leases.renew({ leaseId: a.lease.id, epoch: 1, durationSeconds: 600 });
    await w1.leases.note({ leaseId: a.lease.id, epoch: 1, content: "still mine" });
    const released = await w1.leases.release({ leaseId: a.lease.id, epoch: 1, evidence: "finished before the blocker" });
    expect(released.workItem.stage).toBe("released");

    // b's lease runs out (its worker shortens it to 1 s and stops): the new dependency now holds it back.
    const shortened = await w1.leases.renew({ leaseId: b.lease.id, epoch: 1, durationSeconds: 1 });
    await advanceClockPast(client, shortened.expiresAt);
    await expectStages(actors, { a: "released", b: "blocked", x: "ready" }, ["x"]);
    await claimAndRelease(w1, "x");
    await expectStages(actors, { b: "ready" }, ["b"]);
    const reclaimed = await claimNext(w1, "b");
    expect(reclaimed.lease.epoch).toBe(2);
  });

  it("stage precedence: released/cancelled > needs_attention > leased > waiting_on_children > blocked > ready", async ({ actors }) => {
    const { operator } = actors;
    const w1 = await actors.agent("w1");
    await operator.workItems.create({ id: "x", title: "Open blocker", priority: -1 });

    // waiting_on_children > blocked
    await operator.workItems.create({ id: "p", title: "P", dependsOn: ["x"] });
    await operator.workItems.create({ id: "pc", title: "P child", parentId: "p" });
    await expectStages(actors, { p: "waiting_on_children", pc: "blocked" });

    // leased > waiting_on_children, leased > blocked (and the new dependency blocks the leased item's children)
    await operator.workItems.create({ id: "l", title: "L", priority: 10 });
    const l = await claimNext(w1, "l");
    await operator.workItems.create({ id: "lc", title: "L child", parentId: "l" });
    await expectStages(actors, { l: "leased", lc: "ready" });
    await operator.workItems.addDependency({ workItemId: "l", dependsOnId: "x" });
    await expectStages(actors, { l: "leased", lc: "blocked" });

    // needs_attention > waiting_on_children > blocked
    await operator.workItems.create({ id: "n", title: "N", priority: 10 });
    const n = await claimNext(w1, "n");
    const { request } = await w1.attention.request({ leaseId: n.lease.id, epoch: 1, kind: "decision", question: "Which way?" });
    await expectStages(actors, { n: "needs_attention" });
    await operator.workItems.create({ id: "nc", title: "N child", parentId: "n" });
    await operator.workItems.addDependency({ workItemId: "n", dependsOnId: "x" });
    await expectStages(actors, { n: "needs_attention", nc: "blocked" });
    await operator.attention.resolve({ id: request.id, resolution: "left" });
    await expectStages(actors, { n: "waiting_on_children", nc: "blocked" });
    await operator.workItems.cancel({ id: "nc", reason: "not needed" });
    await expectStages(actors, { n: "blocked", nc: "cancelled" });

    // released > waiting_on_children: a child created under a leased item does not stop its worker releasing it.
    await operator.workItems.create({ id: "r", title: "R", priority: 10 });
    const r = await claimNext(w1, "r");
    await operator.workItems.create({ id: "rc", title: "R child", parentId: "r" });
    await w1.leases.release({ leaseId: r.lease.id, epoch: 1, evidence: "done" });
    const items = await expectStages(actors, { r: "released", rc: "ready" });
    expect(items.get("r")!.openChildCount).toBe(1);

    // cancelled > needs_attention
    await operator.workItems.create({ id: "q", title: "Q", priority: 20 });
    const q = await claimNext(w1, "q");
    await w1.attention.request({ leaseId: q.lease.id, epoch: 1, kind: "scope", question: "Still wanted?" });
    await expectStages(actors, { q: "needs_attention" });
    await operator.workItems.cancel({ id: "q", reason: "no" });
    await expectStages(actors, { q: "cancelled" });

    // Finally release the blocker: everything it held becomes ready (l stays leased).
    await claimAndRelease(w1, "x");
    await expectStages(actors, { x: "released", p: "waiting_on_children", pc: "ready", l: "leased", lc: "ready", n: "ready", r: "released", rc: "ready" });
    expect(l.lease.epoch).toBe(1);
  });
});
