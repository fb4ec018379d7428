import { describe, expect } from "vitest";
import { callerAs } from "../support/app";
import { advanceClockPast, databaseTest } from "../support/fixtures";

const it = databaseTest();

describe("lease lifecycle", () => {
  it("claims in queue order, renews, releases, and records history and events", async ({ database }) => {
    const operator = await callerAs(database.instance, "operator");
    const agent = await callerAs(database.instance, "agent", "worker-a");
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

  it("an expired lease makes its item claimable at once, in queue order, before anything ends the lease", async ({ database }) => {
    const operator = await callerAs(database.instance, "operator");
    const first = await callerAs(database.instance, "agent", "worker-x");
    const second = await callerAs(database.instance, "agent", "worker-y");
    await operator.api.workItems.create({ id: "expiry-low", title: "Low", priority: 100 });
    await operator.api.workItems.create({ id: "expiry-top", title: "Top", priority: 101 });
    const taken = await first.api.leases.claim({ durationSeconds: 60 });
    expect(taken?.workItem.id).toBe("expiry-top");
    // Its time runs out (database clock); no sweep runs here, so the lease stays unended.
    const sql = await database.connect();
    try {
      await advanceClockPast(sql, taken!.lease.expiresAt);
      const reclaimed = await second.api.leases.claim({ durationSeconds: 60 });
      expect(reclaimed?.workItem.id).toBe("expiry-top");
      expect(reclaimed?.lease.epoch).toBe(2);
      const { rows } = await sql.query("SELECT outcome FROM leases WHERE id = $1", [taken!.lease.id]);
      expect(rows[0].outcome).toBe("expired");
      // No expired lease is left: the next claim takes the next item in queue order.
      expect((await second.api.leases.claim({ durationSeconds: 60 }))?.workItem.id).toBe("expiry-low");
    } finally {
      await sql.end();
    }
  });
});
