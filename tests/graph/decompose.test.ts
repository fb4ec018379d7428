import { describe, expect } from "vitest";
import { claimAndRelease, claimNext, expectStages, refused, graphTest, expectUnchanged } from "./support";
import { advanceClockPast } from "../support/fixtures";

const it = graphTest({ poolSize: 5 });

describe("leases.decompose", () => {
  it("creates the children, ends the parent's lease as decomposed and leases the chosen child to the same worker", async ({ actors }) => {
    const { operator } = actors;
    const worker = await actors.agent("decomposer");
    await operator.workItems.create({ id: "side", title: "Side work" });
    await operator.workItems.create({ id: "epic", title: "Epic", priority: 7 });
    const parentLease = await claimNext(worker, "epic");

    const result = await worker.leases.decompose({
      leaseId: parentLease.lease.id,
      epoch: 1,
      claimChildId: "epic.a",
      children: [
        { id: "epic.a", title: "First step", description: "do this first" },
        { title: "A generated id" },
        { id: "epic.c", title: "After the first", dependsOn: ["epic.a"], priority: 2 },
        { id: "epic.d", title: "After side work", dependsOn: ["side"] },
      ],
    });
    const generated = result.children[1]!.id;
    expect(generated).toMatch(/^[a-z0-9][a-z0-9._-]{0,99}$/);
    expect(result.children.map((child) => child.id)).toEqual(["epic.a", generated, "epic.c", "epic.d"]);
    expect(new Set(result.children.map((child) => child.id)).size).toBe(4);
    expect(result.children.map((child) => [child.parentId, child.priority, child.dependsOn, child.stage])).toEqual([
      ["epic", 7, [], "leased"],
      ["epic", 7, [], "ready"],
      ["epic", 2, ["epic.a"], "blocked"],
      ["epic", 7, ["side"], "blocked"],
    ]);
    expect(result.children[0]!.description).toBe("do this first");
    expect(result.endedLease).toMatchObject({ id: parentLease.lease.id, epoch: 1, outcome: "decomposed", workerId: "decomposer" });
    expect(result.endedLease.endedAt).not.toBeNull();
    expect(result.parent).toMatchObject({ id: "epic", status: "open", stage: "waiting_on_children", openChildCount: 4, currentLease: null, previousWorkerId: "decomposer" });
    expect(result.childLease).toMatchObject({ workItemId: "epic.a", workerId: "decomposer", epoch: 1, endedAt: null, outcome: null });
    expect(await worker.leases.history({ workItemId: "epic" })).toMatchObject([{ epoch: 1, outcome: "decomposed" }]);
    expect((await worker.leases.get({ leaseId: result.childLease!.id })).endedAt).toBeNull();
    await expectStages(actors, { epic: "waiting_on_children", "epic.a": "leased", [generated]: "ready", "epic.c": "blocked", "epic.d": "blocked", side: "ready" }, [
      generated,
      "side",
    ]);
    // The old parent lease is fenced off.
    expect(await refused(worker.leases.renew({ leaseId: parentLease.lease.id, epoch: 1 }))).toMatchObject({ reason: "LEASE_NOT_CURRENT", detail: { kind: "ended" } });

    // Rule 8: the parent waits for its children, is never completed automatically, and is ready
    // again (for anyone) once the last child is released or cancelled.
    await worker.leases.release({ leaseId: result.childLease!.id, epoch: 1, evidence: "first step done" });
    await expectStages(actors, { epic: "waiting_on_children", "epic.c": "ready", "epic.d": "blocked" });
    await claimAndRelease(worker, generated);
    await claimAndRelease(worker, "epic.c");
    await expectStages(actors, { epic: "waiting_on_children", "epic.d": "blocked" }, ["side"]);
    await operator.workItems.cancel({ id: "epic.d", reason: "side work will not happen" });
    const items = await expectStages(actors, { epic: "ready", "epic.d": "cancelled" }, ["epic", "side"]);
    expect(items.get("epic")).toMatchObject({ status: "open", openChildCount: 0 });

    const other = await actors.agent("someone-else");
    const reclaimed = await claimNext(other, "epic");
    expect(reclaimed.lease.epoch).toBe(2);
  });

  it("a parent decomposed at epoch 2 is ready again when its last child is released, and its next claim is epoch 3", async ({ actors, sql: client }) => {
    const { operator } = actors;
    const first = await actors.agent("first");
    const second = await actors.agent("second");
    await operator.workItems.create({ id: "story", title: "Story" });
    const expired = await claimNext(first, "story", 1);
    await advanceClockPast(client, expired.lease.expiresAt);
    const current = await claimNext(second, "story");
    expect(current.lease.epoch).toBe(2);
    const result = await second.leases.decompose({ leaseId: current.lease.id, epoch: 2, children: [{ id: "story.only", title: "Only child" }] });
    expect(result.childLease).toBeNull();
    expect(await second.leases.history({ workItemId: "story" })).toMatchObject([
      { epoch: 1, outcome: "expired", workerId: "first" },
      { epoch: 2, outcome: "decomposed", workerId: "second" },
    ]);
    await expectStages(actors, { story: "waiting_on_children", "story.only": "ready" }, ["story.only"]);
    await claimAndRelease(first, "story.only");
    await expectStages(actors, { story: "ready", "story.only": "released" }, ["story"]);
    const again = await claimNext(first, "story");
    expect(again.lease.epoch).toBe(3);
  });

  it("every refusal rolls back everything and leaves the parent's lease live", async ({ actors, sql: client }) => {
    const { operator } = actors;
    const worker = await actors.agent("careful");
    await operator.workItems.create({ id: "taken", title: "An existing item" });
    await operator.workItems.create({ id: "elsewhere", title: "Ready elsewhere" });
    await operator.workItems.create({ id: "rb", title: "To decompose", priority: 10 });
    const parent = await claimNext(worker, "rb");
    const lease = { leaseId: parent.lease.id, epoch: 1 };

    // Duplicate ids: within the call, and against an existing item.
    await expectUnchanged(client, () => worker.leases.decompose({ ...lease, children: [{ id: "rb.x", title: "X" }, { id: "rb.x", title: "X again" }] }), { reason: "DUPLICATE" });
    await expectUnchanged(client, () => worker.leases.decompose({ ...lease, children: [{ id: "rb.y", title: "Y" }, { id: "taken", title: "Taken" }] }), { reason: "DUPLICATE" });
    // Unknown dependency.
    await expectUnchanged(client, () => worker.leases.decompose({ ...lease, children: [{ id: "rb.y", title: "Y", dependsOn: ["ghost"] }] }), { reason: "NOT_FOUND" });
    // A cycle among the new children.
    await expectUnchanged(client, 
      () => worker.leases.decompose({ ...lease, children: [{ id: "rb.y", title: "Y", dependsOn: ["rb.z"] }, { id: "rb.z", title: "Z", dependsOn: ["rb.y"] }] }),
      { reason: "DEPENDENCY_CYCLE" },
    );
    // claimChildId that is not claimable (it waits for a sibling)…
    await expectUnchanged(client, 
      () => worker.leases.decompose({ ...lease, claimChildId: "rb.z", children: [{ id: "rb.y", title: "Y" }, { id: "rb.z", title: "Z", dependsOn: ["rb.y"] }] }),
      { reason: "NOT_CLAIMABLE", detail: { stage: "blocked" } },
    );
    // …or not one of the children (even an existing ready item).
    await expectUnchanged(client, () => worker.leases.decompose({ ...lease, claimChildId: "elsewhere", children: [{ id: "rb.y", title: "Y" }] }), { reason: "NOT_FOUND" });
    // Someone else's lease.
    const intruder = await actors.agent("intruder");
    await expectUnchanged(client, () => intruder.leases.decompose({ ...lease, children: [{ id: "rb.y", title: "Y" }] }), { reason: "FORBIDDEN" });

    // The parent's lease is still live and usable, and a valid decomposition then works.
    const item = await operator.workItems.get({ id: "rb" });
    expect(item).toMatchObject({ stage: "leased", openChildCount: 0, currentLease: { id: parent.lease.id, epoch: 1, endedAt: null } });
    await expectStages(actors, { rb: "leased", taken: "ready", elsewhere: "ready" }, ["taken", "elsewhere"]);
    await worker.leases.renew({ ...lease, durationSeconds: 600 });
    const ok = await worker.leases.decompose({ ...lease, claimChildId: "rb.y", children: [{ id: "rb.y", title: "Y" }, { id: "rb.z", title: "Z", dependsOn: ["rb.y"] }] });
    expect(ok.childLease).toMatchObject({ workItemId: "rb.y", epoch: 1 });
  });

  it("a stale lease (expired, then superseded) cannot decompose and changes nothing", async ({ actors, sql: client }) => {
    const { operator } = actors;
    const slow = await actors.agent("slow");
    const fast = await actors.agent("fast");
    await operator.workItems.create({ id: "st", title: "Stale parent" });
    const old = await claimNext(slow, "st", 1);
    await advanceClockPast(client, old.lease.expiresAt);
    const decomposeOld = () => slow.leases.decompose({ leaseId: old.lease.id, epoch: 1, children: [{ id: "st.a", title: "A" }] });
    await expectUnchanged(client, decomposeOld, { reason: "LEASE_NOT_CURRENT", detail: { kind: "expired" } });

    const current = await claimNext(fast, "st");
    expect(current.lease.epoch).toBe(2);
    await expectUnchanged(client, decomposeOld, { reason: "LEASE_NOT_CURRENT", detail: { kind: "superseded" } });
    await expectStages(actors, { st: "leased" }, []);
    expect((await operator.workItems.get({ id: "st" })).currentLease).toMatchObject({ id: current.lease.id, epoch: 2, endedAt: null });
    const done = await fast.leases.decompose({ leaseId: current.lease.id, epoch: 2, children: [{ id: "st.a", title: "A" }] });
    expect(done.endedLease).toMatchObject({ epoch: 2, outcome: "decomposed" });
  });
});
