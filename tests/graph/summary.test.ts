import { describe, expect } from "vitest";
import { advanceClockPast, databaseTest } from "../support/fixtures";

/* dashboard.summary counts every item once, in the stage the one readiness rule gives it. */

const it = databaseTest();

describe("dashboard.summary", () => {
  it("counts each item in its stage: terminal items by status, an expired lease as ready again", async ({ sql, people: world }) => {
    const { operator, agent } = world;
    const worker = await agent("summarised");
    for (const id of ["ready-1", "ready-2", "blocker", "parent", "asked", "leased", "expiring", "done", "dropped"]) {
      await operator.workItems.create({ id, title: id });
    }
    await operator.workItems.create({ id: "blocked", title: "Blocked", dependsOn: ["blocker"] });
    await operator.workItems.create({ id: "child", title: "Child", parentId: "parent" });
    await worker.leases.claim({ workItemId: "leased", durationSeconds: 600 });
    const asked = (await worker.leases.claim({ workItemId: "asked", durationSeconds: 600 }))!.lease;
    await worker.attention.request({ leaseId: asked.id, epoch: asked.epoch, kind: "decision", question: "Which way?" });
    const done = (await worker.leases.claim({ workItemId: "done", durationSeconds: 600 }))!.lease;
    await worker.leases.release({ leaseId: done.id, epoch: done.epoch, evidence: "done" });
    await operator.workItems.cancel({ id: "dropped", reason: "not needed" });
    const expiring = (await worker.leases.claim({ workItemId: "expiring", durationSeconds: 1 }))!.lease;
    await advanceClockPast(sql, expiring.expiresAt);

    const summary = await operator.dashboard.summary();
    // ready: ready-1, ready-2, blocker, child, and expiring (its lease ran out)
    expect(summary.stages).toEqual({ ready: 5, blocked: 1, waiting_on_children: 1, leased: 1, needs_attention: 1, released: 1, cancelled: 1, scheduled: 0 });
    expect(summary.activeLeases).toBe(1);
  });
});
