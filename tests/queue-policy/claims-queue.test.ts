import { describe, expect } from "vitest";
import { databaseTest } from "../support/fixtures";
import { scopedToken, setPolicy } from "./support";

const it = databaseTest({ scope: "test" });

describe("workItems.queue shows what that worker's next claim takes (rules 10, 12–15)", () => {
  it("across capabilities, projects, time gates and full keys, the queue's head is the next claim's item, every time", async ({ database, sql, people }) => {
    const specs = [
      { id: "q-gpu", priority: 9, policy: { requires: ["gpu"] } },
      { id: "q-beta", priority: 8, policy: { projectId: "beta" } },
      { id: "q-gated", priority: 7, policy: { notBeforeInSeconds: 3600 } },
      { id: "q-paused", priority: 6, policy: { concurrencyKey: "paused" } },
      { id: "q-room-1", priority: 5, policy: { concurrencyKey: "room" } },
      { id: "q-room-2", priority: 5, policy: { concurrencyKey: "room" } },
      { id: "q-beta-gpu", priority: 4, policy: { projectId: "beta", requires: ["gpu"] } },
      { id: "q-plain", priority: 3, policy: {} },
    ];
    for (const { id, priority, policy } of specs) {
      await people.operator.workItems.create({ id, title: id, priority });
      await setPolicy(sql, [id], policy);
    }
    await people.operator.limits.set({ key: "paused", maxLeases: 0 });
    await people.operator.limits.set({ key: "room", maxLeases: 1 });
    const plain = await scopedToken(database.instance, sql, "agent", { workerId: "plain" });
    const betaGpu = await scopedToken(database.instance, sql, "agent", { workerId: "beta-gpu", capabilities: ["gpu"], projects: ["beta"] });

    expect((await plain.api.workItems.queue({ limit: 10 })).map((item) => item.id)).toEqual(["q-beta", "q-room-1", "q-room-2", "q-plain"]);
    expect((await betaGpu.api.workItems.queue({ limit: 10 })).map((item) => item.id)).toEqual(["q-beta", "q-beta-gpu"]);
    expect((await betaGpu.api.workItems.queue({ limit: 10, capabilities: [] })).map((item) => item.id)).toEqual(["q-beta"]);
    expect((await plain.api.workItems.queue({ limit: 10, projectId: "beta" })).map((item) => item.id)).toEqual(["q-beta"]);

    const taken: string[] = [];
    for (const agent of [plain, betaGpu, plain, plain, plain, betaGpu]) {
      const [head] = await agent.api.workItems.queue({ limit: 10 });
      const claimed = await agent.api.leases.claim({});
      expect(claimed?.workItem.id).toBe(head?.id);
      if (claimed) taken.push(claimed.workItem.id);
    }
    // q-room-2 waits behind the full key; q-gpu (default project, gpu) suits neither; gated and paused stay.
    expect(taken).toEqual(["q-beta", "q-beta-gpu", "q-room-1", "q-plain"]);
    expect(await plain.api.workItems.queue({ limit: 10 })).toEqual([]);
  });

  it("an operator's view of a worker's queue uses that worker's capabilities; without a worker, no capability filter", async ({ database, sql, people }) => {
    await people.operator.workItems.create({ id: "needs-gpu", title: "gpu", priority: 2 });
    await people.operator.workItems.create({ id: "needs-none", title: "none", priority: 1 });
    await setPolicy(sql, ["needs-gpu"], { requires: ["gpu"] });
    await scopedToken(database.instance, sql, "agent", { workerId: "cpu-only" });
    expect((await people.operator.workItems.queue({ limit: 10, workerId: "cpu-only" })).map((item) => item.id)).toEqual(["needs-none"]);
    expect((await people.operator.workItems.queue({ limit: 10 })).map((item) => item.id)).toEqual(["needs-gpu", "needs-none"]);
    expect((await people.operator.workItems.queue({ limit: 10, capabilities: [] })).map((item) => item.id)).toEqual(["needs-none"]);
  });
});
