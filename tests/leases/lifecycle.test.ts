import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerAs } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

describe("lease lifecycle", () => {
  it("claims in queue order, renews, releases, and records history and events", async () => {
    const operator = await callerAs(database.db, "operator");
    const agent = await callerAs(database.db, "agent", "worker-a");
    await operator.api.workItems.create({ id: "low", title: "Low", priority: 1 });
    await operator.api.workItems.create({ id: "high", title: "High", priority: 5 });
    const claimed = await agent.api.leases.claim({ durationSeconds: 60 });
    expect(claimed?.workItem.id).toBe("high");
    expect(claimed?.lease.epoch).toBe(1);
    expect(claimed?.workItem.stage).toBe("leased");
    const renewed = await agent.api.leases.renew({ leaseId: claimed!.lease.id, epoch: 1, durationSeconds: 120 });
    expect(Date.parse(renewed.expiresAt)).toBeGreaterThan(Date.parse(claimed!.lease.expiresAt));
    const note = await agent.api.leases.note({ leaseId: claimed!.lease.id, epoch: 1, content: "halfway" });
    expect(note.workerId).toBe("worker-a");
    const released = await agent.api.leases.release({ leaseId: claimed!.lease.id, epoch: 1, evidence: "done" });
    expect(released.workItem.status).toBe("released");
    expect(released.lease.outcome).toBe("released");
    const history = await agent.api.leases.history({ workItemId: "high" });
    expect(history.map((lease) => lease.outcome)).toEqual(["released"]);
    const events = await agent.api.events.list({ workItemId: "high" });
    expect(events.items.map((event) => event.type)).toEqual([
      "work_item.created", "lease.claimed", "lease.renewed", "note.added", "lease.ended", "work_item.status_changed",
    ]);
    await expect(agent.api.leases.release({ leaseId: claimed!.lease.id, epoch: 1, evidence: "again" })).rejects.toMatchObject({
      cause: { reason: "LEASE_NOT_CURRENT", detail: { kind: "ended" } },
    });
  });
});
