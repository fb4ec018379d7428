import { describe, expect } from "vitest";
import { databaseTest } from "../support/fixtures";

/*
 * dashboard.neighbourhood's waitingOn is the server's explanation of a stage, from the one
 * readiness rule (server/domain/readiness.ts): every condition that holds, the deciding one
 * first, each with what stands in the way. The work-item page shows it instead of re-deriving
 * readiness from counters.
 */

const it = databaseTest();

describe("dashboard.neighbourhood waitingOn", () => {
  it("lists every condition that holds in stage precedence, with the requests, children and blockers behind it", async ({ people: world }) => {
    const { operator, agent } = world;
    const worker = await agent("explained");
    await operator.workItems.create({ id: "top", title: "Top" });
    await operator.workItems.create({ id: "top-blocker", title: "Top blocker" });
    await operator.workItems.create({ id: "blocker", title: "Blocker" });
    await operator.workItems.create({ id: "done-blocker", title: "Done blocker" });
    await operator.workItems.create({ id: "asked", title: "Asked", parentId: "top" });

    const { lease } = (await worker.leases.claim({ workItemId: "asked", durationSeconds: 600 }))!;
    expect((await operator.dashboard.neighbourhood({ id: "asked" })).waitingOn).toMatchObject([
      { stage: "leased", lease: { id: lease.id, workerId: "explained", epoch: 1, expiresAt: lease.expiresAt } },
    ]);
    const { request } = await worker.attention.request({ leaseId: lease.id, epoch: 1, kind: "decision", question: "Which way?" });

    const done = (await worker.leases.claim({ workItemId: "done-blocker", durationSeconds: 600 }))!;
    await worker.leases.release({ leaseId: done.lease.id, epoch: 1, evidence: "done" });
    await operator.workItems.addDependency({ workItemId: "top", dependsOnId: "top-blocker" });
    await operator.workItems.addDependency({ workItemId: "asked", dependsOnId: "blocker" });
    await operator.workItems.addDependency({ workItemId: "asked", dependsOnId: "done-blocker" });
    await operator.workItems.create({ id: "asked-child", title: "Child", parentId: "asked" });

    const item = await operator.workItems.get({ id: "asked" });
    const around = await operator.dashboard.neighbourhood({ id: "asked" });
    expect(item.stage).toBe("needs_attention");
    expect(around.waitingOn.map((reason) => reason.stage)).toEqual(["needs_attention", "waiting_on_children", "blocked"]);
    // The child inherits its parent's and ancestors' blockers, so it is blocked itself.
    expect(around.waitingOn).toEqual([
      { stage: "needs_attention", requests: [{ id: request.id, question: "Which way?", workerId: "explained", createdAt: request.createdAt }] },
      { stage: "waiting_on_children", openChildCount: 1, children: [{ id: "asked-child", title: "Child", stage: "blocked" }] },
      {
        stage: "blocked",
        // done-blocker is released: it satisfies the dependency, so it is not listed.
        dependencies: [{ id: "blocker", title: "Blocker", stage: "ready" }],
        ancestorBlockers: [{ ancestorId: "top", id: "top-blocker", title: "Top blocker", stage: "ready" }],
      },
    ]);

    await operator.attention.resolve({ id: request.id, resolution: "That way" });
    const after = await operator.dashboard.neighbourhood({ id: "asked" });
    expect(after.waitingOn.map((reason) => reason.stage)).toEqual(["waiting_on_children", "blocked"]);
    expect((await operator.workItems.get({ id: "asked" })).stage).toBe("waiting_on_children");
  });

  it("names a time gate that is still ahead after what decides the stage, with its notBefore", async ({ people: world }) => {
    const { operator } = world;
    await operator.workItems.create({ id: "gate-blocker", title: "Blocker" });
    const gated = await operator.workItems.create({ id: "gated", title: "Gated", delaySeconds: 3_600, dependsOn: ["gate-blocker"] });
    expect(gated.stage).toBe("blocked");
    expect((await operator.dashboard.neighbourhood({ id: "gated" })).waitingOn).toEqual([
      { stage: "blocked", dependencies: [{ id: "gate-blocker", title: "Blocker", stage: "ready" }], ancestorBlockers: [] },
      { stage: "scheduled", notBefore: gated.notBefore },
    ]);
    await operator.workItems.cancel({ id: "gate-blocker", reason: "not needed" });
    expect((await operator.workItems.get({ id: "gated" })).stage).toBe("scheduled");
    expect((await operator.dashboard.neighbourhood({ id: "gated" })).waitingOn).toEqual([{ stage: "scheduled", notBefore: gated.notBefore }]);
  });

  it("is empty for ready, released and cancelled items", async ({ people: world }) => {
    const { operator, agent } = world;
    const worker = await agent("finisher");
    await operator.workItems.create({ id: "plain-ready", title: "Ready" });
    await operator.workItems.create({ id: "plain-released", title: "Released" });
    await operator.workItems.create({ id: "plain-cancelled", title: "Cancelled", dependsOn: ["plain-ready"] });
    const { lease } = (await worker.leases.claim({ workItemId: "plain-released", durationSeconds: 600 }))!;
    await worker.leases.release({ leaseId: lease.id, epoch: 1, evidence: "done" });
    await operator.workItems.cancel({ id: "plain-cancelled", reason: "not needed" });
    for (const id of ["plain-ready", "plain-released", "plain-cancelled"]) {
      expect((await operator.dashboard.neighbourhood({ id })).waitingOn, id).toEqual([]);
    }
  });
});
