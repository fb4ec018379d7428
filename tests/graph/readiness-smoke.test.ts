import { describe, expect } from "vitest";
import { refusal, databaseTest } from "../support/fixtures";

const it = databaseTest();

describe("readiness through the graph (smoke)", () => {
  it("ancestor dependencies, children, decomposition, attention and continuity end to end", async ({ people }) => {
    const { operator, agent } = people;
    const a = await agent("smoke-a");
    const b = await agent("smoke-b");
    const stage = async (id: string) => (await operator.workItems.get({ id })).stage;

    await operator.workItems.create({ id: "blocker", title: "Blocker" });
    await operator.workItems.create({ id: "parent", title: "Parent", dependsOn: ["blocker"] });
    await operator.workItems.create({ id: "child", title: "Child", parentId: "parent" });
    await operator.workItems.create({ id: "grandchild", title: "Grandchild", parentId: "child" });
    expect(await stage("parent")).toBe("waiting_on_children");
    expect(await stage("child")).toBe("waiting_on_children");
    expect(await stage("grandchild")).toBe("blocked");
    expect((await operator.workItems.queue({})).map((item) => item.id)).toEqual(["blocker"]);

    expect(await refusal(operator.workItems.addDependency({ workItemId: "blocker", dependsOnId: "grandchild" }))).toMatchObject({ reason: "DEPENDENCY_CYCLE" });
    expect(await refusal(operator.workItems.addDependency({ workItemId: "grandchild", dependsOnId: "parent" }))).toMatchObject({ reason: "DEPENDENCY_CYCLE" });
    expect(await refusal(operator.workItems.addDependency({ workItemId: "parent", dependsOnId: "grandchild" }))).toMatchObject({ reason: "DEPENDENCY_CYCLE" });
    expect(await refusal(operator.workItems.move({ id: "parent", parentId: "grandchild" }))).toMatchObject({ reason: "DEPENDENCY_CYCLE" });
    expect(await refusal(operator.workItems.addDependency({ workItemId: "blocker", dependsOnId: "blocker" }))).toMatchObject({ reason: "DEPENDENCY_CYCLE" });

    const blocker = (await a.leases.claim({ durationSeconds: 60 }))!;
    expect(blocker.workItem.id).toBe("blocker");
    await operator.workItems.cancel({ id: "grandchild", reason: "not needed" }).catch(() => undefined);
    await a.leases.release({ leaseId: blocker.lease.id, epoch: 1, evidence: "done" });
    expect(await stage("grandchild")).toBe("cancelled");
    expect(await stage("child")).toBe("ready");

    const child = (await a.leases.claim({ durationSeconds: 60 }))!;
    expect(child.workItem.id).toBe("child");
    const split = await a.leases.decompose({
      leaseId: child.lease.id,
      epoch: 1,
      claimChildId: "child.one",
      children: [
        { id: "child.one", title: "One" },
        { id: "child.two", title: "Two", dependsOn: ["child.one"] },
      ],
    });
    expect(split.endedLease.outcome).toBe("decomposed");
    expect(split.childLease?.epoch).toBe(1);
    expect(split.parent.stage).toBe("waiting_on_children");
    expect(split.children.map((c) => c.stage)).toEqual(["leased", "blocked"]);

    const asked = await a.attention.request({
      leaseId: split.childLease!.id,
      epoch: 1,
      kind: "decision",
      question: "Which way?",
      options: ["left", "right"],
    });
    expect(asked.endedLease?.outcome).toBe("attention_requested");
    expect(await stage("child.one")).toBe("needs_attention");
    expect(await refusal(a.attention.resolve({ id: asked.request.id, resolution: "left" }))).toMatchObject({ reason: "FORBIDDEN" });
    await operator.workItems.create({ id: "other", title: "Other", priority: 50 });
    const resolved = await operator.attention.resolve({ id: asked.request.id, resolution: "left" });
    expect(resolved.workItem.stage).toBe("ready");
    expect(await refusal(operator.attention.resolve({ id: asked.request.id, resolution: "again" }))).toMatchObject({ reason: "ALREADY_RESOLVED" });

    // Continuity: the previous worker gets it first, others only after other ready work.
    expect((await b.workItems.queue({})).map((i) => i.id)).toEqual(["other", "child.one"]);
    expect((await a.workItems.queue({})).map((i) => i.id)).toEqual(["child.one", "other"]);
    const resumed = (await a.leases.claim({ durationSeconds: 60 }))!;
    expect(resumed.workItem.id).toBe("child.one");
    expect(resumed.lease.epoch).toBe(2);
    expect(resumed.attention.map((r) => [r.question, r.resolution])).toEqual([["Which way?", "left"]]);

    await a.leases.release({ leaseId: resumed.lease.id, epoch: 2, evidence: "went left" });
    expect(await stage("child.two")).toBe("ready");
    const two = (await b.leases.claim({ workItemId: "child.two", durationSeconds: 60 }))!;
    await b.leases.release({ leaseId: two.lease.id, epoch: 1, evidence: "done" });
    expect(await stage("child")).toBe("ready");
    const again = (await b.leases.claim({ workItemId: "child", durationSeconds: 60 }))!;
    expect(again.lease.epoch).toBe(2);
  });
});
