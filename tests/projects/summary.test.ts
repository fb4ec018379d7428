import { describe, expect } from "vitest";
import { databaseTest } from "../support/fixtures";

/* dashboard.summary's scheduled and unroutable, and dashboard.unroutable (rule 13, rule 15). */

const it = databaseTest({ scope: "test" });

describe("dashboard.summary: scheduled and unroutable", () => {
  it("with no agent token every ready item is unroutable; scheduled items count as scheduled, not unroutable", async ({ people }) => {
    await people.operator.workItems.create({ id: "r1", title: "Ready" });
    await people.operator.workItems.create({ id: "later", title: "Later", delaySeconds: 3600 });
    const summary = await people.operator.dashboard.summary();
    expect(summary.stages).toMatchObject({ ready: 1, scheduled: 1 });
    expect(summary.unroutable).toBe(1);
  });

  it("an item is routable when one unrevoked agent token that sees its project has every capability it requires", async ({ people }) => {
    await people.admin.projects.create({ id: "ml", name: "ML" });
    await people.operator.workItems.create({ id: "plain", title: "Plain" });
    await people.operator.workItems.create({ id: "gpu-web", title: "GPU and browser", requires: ["browser", "gpu"] });
    await people.operator.workItems.create({ id: "gpu-only", title: "GPU", requires: ["gpu"] });
    await people.operator.workItems.create({ id: "ml-gpu", title: "ML GPU", projectId: "ml", requires: ["gpu"] });
    await people.admin.tokens.create({ role: "agent", workerId: "browser-w", capabilities: ["browser"] });
    await people.admin.tokens.create({ role: "agent", workerId: "gpu-w", capabilities: ["gpu"], projects: ["ml"] });

    // plain: any agent; gpu-web: nobody has both; gpu-only: the GPU token cannot see default; ml-gpu: routable.
    expect((await people.operator.dashboard.summary()).unroutable).toBe(2);
    expect((await people.operator.dashboard.summary({ projectId: "ml" })).unroutable).toBe(0);
    const listed = await people.operator.dashboard.unroutable({});
    expect(listed.total).toBe(2);
    expect(listed.items.map(({ item, missing }) => ({ id: item.id, missing }))).toEqual([
      { id: "gpu-web", missing: ["gpu"] },
      { id: "gpu-only", missing: ["gpu"] },
    ]);

    const wide = await people.admin.tokens.create({ role: "agent", workerId: "wide-w", capabilities: ["browser", "gpu"] });
    expect((await people.operator.dashboard.unroutable({})).total).toBe(0);
    await people.admin.tokens.revoke({ id: wide.id });
    expect((await people.operator.dashboard.unroutable({ limit: 1 }))).toMatchObject({ total: 2, items: [{ item: { id: "gpu-web" } }] });
  });
});
