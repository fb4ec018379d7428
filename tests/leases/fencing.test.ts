import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { actors, refusal, waitUntilDatabaseTime } from "../support/fixtures";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { sweepExpiredLeases } from "../../server/operations/sweep";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

async function snapshot(itemId: string) {
  const client = await database.connect();
  const item = await client.query("SELECT * FROM work_items WHERE id = $1", [itemId]);
  const leases = await client.query("SELECT * FROM leases WHERE work_item_id = $1 ORDER BY epoch", [itemId]);
  const notes = await client.query("SELECT count(*)::int AS n FROM notes WHERE work_item_id = $1", [itemId]);
  const attention = await client.query("SELECT count(*)::int AS n FROM attention_requests WHERE work_item_id = $1", [itemId]);
  return { item: item.rows, leases: leases.rows, notes: notes.rows, attention: attention.rows };
}

describe("fencing", () => {
  it("expired, then superseded: the old worker's writes change nothing; history records the expiry", async () => {
    const { operator, agent } = await actors(database);
    const a = await agent("worker-a");
    const b = await agent("worker-b");
    await operator.workItems.create({ id: "fenced", title: "Fenced item" });
    const first = (await a.leases.claim({ workItemId: "fenced", durationSeconds: 1 }))!;
    await waitUntilDatabaseTime(await database.connect(), first.lease.expiresAt);

    const writes = (leaseId: string, epoch: number) => [
      () => a.leases.renew({ leaseId, epoch, durationSeconds: 60 }),
      () => a.leases.release({ leaseId, epoch, evidence: "late" }),
      () => a.leases.cancel({ leaseId, epoch, reason: "late" }),
      () => a.leases.note({ leaseId, epoch, content: "late" }),
      () => a.leases.decompose({ leaseId, epoch, children: [{ title: "late child" }] }),
      () => a.attention.request({ leaseId, epoch, kind: "help", question: "late?" }),
    ];
    const beforeReclaim = await snapshot("fenced");
    for (const write of writes(first.lease.id, 1)) {
      expect(await refusal(write())).toMatchObject({ reason: "LEASE_NOT_CURRENT", detail: { kind: "expired" } });
    }
    expect(await snapshot("fenced")).toEqual(beforeReclaim);

    const second = (await b.leases.claim({ durationSeconds: 60 }))!;
    expect(second.workItem.id).toBe("fenced");
    expect(second.lease.epoch).toBe(2);
    const afterReclaim = await snapshot("fenced");
    for (const write of writes(first.lease.id, 1)) {
      expect(await refusal(write())).toMatchObject({ reason: "LEASE_NOT_CURRENT", detail: { kind: "superseded" } });
    }
    expect(await snapshot("fenced")).toEqual(afterReclaim);

    const history = await operator.leases.history({ workItemId: "fenced" });
    expect(history.map((lease) => [lease.epoch, lease.workerId, lease.outcome])).toEqual([
      [1, "worker-a", "expired"],
      [2, "worker-b", null],
    ]);
    expect(history[0]!.endedAt).toBe(history[0]!.expiresAt);
    expect((await operator.workItems.get({ id: "fenced" })).currentLease?.id).toBe(second.lease.id);
  });

  it("unknown, ended and forbidden presentations", async () => {
    const { operator, agent, admin } = await actors(database);
    const a = await agent("owner");
    const other = await agent("intruder");
    await operator.workItems.create({ id: "owned", title: "Owned" });
    const claimed = (await a.leases.claim({ workItemId: "owned", durationSeconds: 60 }))!;
    const { id: leaseId } = claimed.lease;

    expect(await refusal(a.leases.renew({ leaseId: "00000000-0000-4000-8000-000000000000", epoch: 1 }))).toMatchObject({
      reason: "LEASE_NOT_CURRENT",
      detail: { kind: "unknown" },
    });
    expect(await refusal(a.leases.renew({ leaseId, epoch: 7 }))).toMatchObject({ reason: "LEASE_NOT_CURRENT", detail: { kind: "unknown" } });
    expect(await refusal(other.leases.note({ leaseId, epoch: 1, content: "not mine" }))).toMatchObject({ reason: "FORBIDDEN" });
    expect(await refusal(other.leases.release({ leaseId, epoch: 1, evidence: "not mine" }))).toMatchObject({ reason: "FORBIDDEN" });
    expect(await refusal(operator.leases.renew({ leaseId, epoch: 1 } as never))).toMatchObject({ reason: "FORBIDDEN" });

    const renewed = await admin.leases.renew({ leaseId, epoch: 1, durationSeconds: 120, workerId: "owner" });
    expect(renewed.workerId).toBe("owner");
    expect(await refusal(admin.leases.renew({ leaseId, epoch: 1, workerId: "intruder" }))).toMatchObject({ reason: "FORBIDDEN" });

    await a.leases.release({ leaseId, epoch: 1, evidence: "shipped" });
    expect(await refusal(a.leases.release({ leaseId, epoch: 1, evidence: "again" }))).toMatchObject({
      reason: "LEASE_NOT_CURRENT",
      detail: { kind: "ended" },
    });
    expect(await refusal(a.leases.cancel({ leaseId, epoch: 1, reason: "again" }))).toMatchObject({ reason: "LEASE_NOT_CURRENT", detail: { kind: "ended" } });
  });

  it("a release racing a reclaim: exactly one wins and history stays consistent", async () => {
    const { operator, agent } = await actors(database);
    const a = await agent("racer-a");
    const b = await agent("racer-b");
    const clock = await database.connect();
    const ids = Array.from({ length: 20 }, (_, round) => `race-${round}`);
    const leases = [];
    for (const id of ids) {
      await operator.workItems.create({ id, title: id, priority: 10_000 });
      leases.push((await a.leases.claim({ workItemId: id, durationSeconds: 1 }))!.lease);
    }
    await waitUntilDatabaseTime(clock, leases.at(-1)!.expiresAt);
    await Promise.all(
      ids.map(async (id, round) => {
        const [released, reclaimed] = await Promise.allSettled([
          a.leases.release({ leaseId: leases[round]!.id, epoch: 1, evidence: "late" }),
          b.leases.claim({ workItemId: id, durationSeconds: 60 }),
        ]);
        // The lease had expired: the release is always fenced, the reclaim always wins.
        expect(released.status).toBe("rejected");
        expect(reclaimed.status).toBe("fulfilled");
        const history = await operator.leases.history({ workItemId: id });
        expect(history.map((l) => [l.epoch, l.outcome])).toEqual([[1, "expired"], [2, null]]);
        expect(history[0]!.endedAt).toBe(history[0]!.expiresAt);
      }),
    );
  });

  it("a live release racing a named reclaim: one of them wins, never both", async () => {
    const { operator, agent } = await actors(database);
    const a = await agent("live-a");
    const b = await agent("live-b");
    for (let round = 0; round < 15; round++) {
      const id = `live-race-${round}`;
      await operator.workItems.create({ id, title: id });
      const lease = (await a.leases.claim({ workItemId: id, durationSeconds: 60 }))!.lease;
      const [released, reclaimed] = await Promise.allSettled([
        a.leases.release({ leaseId: lease.id, epoch: 1, evidence: "done" }),
        b.leases.claim({ workItemId: id, durationSeconds: 60 }),
      ]);
      expect(released.status).toBe("fulfilled");
      expect(reclaimed.status).toBe("rejected");
      const history = await operator.leases.history({ workItemId: id });
      expect(history.map((l) => [l.epoch, l.outcome])).toEqual([[1, "released"]]);
    }
  });

  it("a wrong app clock changes no decision: times and expiry come from the database", async () => {
    const { operator, agent } = await actors(database);
    const a = await agent("clock-a");
    await operator.workItems.create({ id: "clock-skew", title: "Clock skew" });
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(new Date(Date.now() + 5 * 3600_000));
      const claimed = (await a.leases.claim({ workItemId: "clock-skew", durationSeconds: 60 }))!;
      const { rows } = await (await database.connect()).query<{ now: Date }>("SELECT clock_timestamp() AS now");
      const databaseNow = rows[0]!.now.getTime();
      // expiresAt = database now + 60 s, not the shifted app clock.
      expect(Math.abs(Date.parse(claimed.lease.expiresAt) - (databaseNow + 60_000))).toBeLessThan(5_000);
      vi.setSystemTime(new Date(Date.now() - 10 * 3600_000));
      const renewed = await a.leases.renew({ leaseId: claimed.lease.id, epoch: 1, durationSeconds: 30 });
      expect(Math.abs(Date.parse(renewed.expiresAt) - (databaseNow + 30_000))).toBeLessThan(5_000);
      expect(await sweepExpiredLeases(database.db)).toBe(0);
      expect((await operator.workItems.get({ id: "clock-skew" })).stage).toBe("leased");
    } finally {
      vi.useRealTimers();
    }
  });
});
