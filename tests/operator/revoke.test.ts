import type pg from "pg";
import type { TestDatabase } from "../support/database";
import { describe, expect } from "vitest";
import { refusal, advanceClockPast, databaseTest, lockWaiters } from "../support/fixtures";
import { databaseSnapshot } from "../leases/support";
import { settle } from "./support";

const it = databaseTest();

const endedEvents = async (sql: pg.Client, leaseId: string) =>
  (await sql.query<{ actor: string; data: Record<string, unknown> }>(
    "SELECT actor, data FROM events WHERE lease_id = $1 AND type = 'lease.ended' ORDER BY sequence", [leaseId])).rows;

describe("leases.revoke", () => {
  it("ends the live lease now as revoked, audited; the item is ready again; the worker is fenced with kind revoked and the reason", async ({ sql, people }) => {
    const { operator, agent } = people;
    const runaway = await agent("runaway");
    await operator.workItems.create({ id: "rv-basic", title: "Runaway work" });
    const { lease } = (await runaway.leases.claim({ workItemId: "rv-basic", durationSeconds: 900 }))!;

    const result = await operator.leases.revoke({ leaseId: lease.id, epoch: lease.epoch, reason: "looping on the same test" });
    expect(result.lease).toMatchObject({ id: lease.id, outcome: "revoked" });
    expect(Date.parse(result.lease.endedAt!)).toBeLessThan(Date.parse(lease.expiresAt));
    expect(result.workItem).toMatchObject({ id: "rv-basic", stage: "ready", currentLease: null, previousWorkerId: "runaway", status: "open" });
    const events = await endedEvents(sql, lease.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.actor).toMatch(/^operator:/);
    expect(events[0]!.data).toMatchObject({ outcome: "revoked", workerId: "runaway", reason: "looping on the same test" });

    // Every write of the worker with that lease is refused and changes nothing.
    const before = await databaseSnapshot(sql);
    const writes = [
      () => runaway.leases.renew({ leaseId: lease.id, epoch: lease.epoch, durationSeconds: 60 }),
      () => runaway.leases.release({ leaseId: lease.id, epoch: lease.epoch, evidence: "late" }),
      () => runaway.leases.cancel({ leaseId: lease.id, epoch: lease.epoch, reason: "late" }),
      () => runaway.leases.note({ leaseId: lease.id, epoch: lease.epoch, content: "late" }),
      () => runaway.leases.decompose({ leaseId: lease.id, epoch: lease.epoch, children: [{ title: "late" }] }),
      () => runaway.attention.request({ leaseId: lease.id, epoch: lease.epoch, kind: "help", question: "late?" }),
    ];
    for (const write of writes) {
      const { reason, detail } = await refusal(write());
      expect(reason).toBe("LEASE_NOT_CURRENT");
      expect(detail).toMatchObject({ kind: "revoked", reason: "looping on the same test", leaseId: lease.id });
      expect(detail.revokedBy).toMatch(/^operator:/);
    }
    expect(await databaseSnapshot(sql)).toEqual(before);

    // Still "revoked" (not "superseded") after someone else took the item over.
    const other = await agent("rescuer");
    const taken = (await other.leases.claim({ workItemId: "rv-basic", durationSeconds: 60 }))!;
    expect(taken.lease.epoch).toBe(2);
    const late = await refusal(runaway.leases.renew({ leaseId: lease.id, epoch: lease.epoch, durationSeconds: 60 }));
    expect(late.detail).toMatchObject({ kind: "revoked", reason: "looping on the same test", currentEpoch: 2 });
  });

  it("gives the revoked worker no continuity preference: the next claim follows plain queue order", async ({ people }) => {
    const { operator, agent } = people;
    const a = await agent("cont-a");
    await operator.workItems.create({ id: "rv-cont-low", title: "Low", priority: -50 });
    await operator.workItems.create({ id: "rv-cont-high", title: "High", priority: -40 });
    const { lease } = (await a.leases.claim({ workItemId: "rv-cont-low", durationSeconds: 60 }))!;
    await operator.leases.revoke({ leaseId: lease.id, epoch: lease.epoch, reason: "reassigning" });
    const queue = await a.workItems.queue({ limit: 200 });
    const ids = queue.map((item) => item.id).filter((id) => id.startsWith("rv-cont-"));
    expect(ids).toEqual(["rv-cont-high", "rv-cont-low"]);
  });

  it("refuses a lease that is not live with the usual kind, agents, and a blank reason; nothing changes", async ({ sql, people }) => {
    const { operator, agent } = people;
    const w = await agent("rv-refused");
    await operator.workItems.create({ id: "rv-refused", title: "Refusals" });
    const { lease } = (await w.leases.claim({ workItemId: "rv-refused", durationSeconds: 1 }))!;
    const before = await databaseSnapshot(sql);
    await expect(operator.leases.revoke({ leaseId: lease.id, epoch: lease.epoch, reason: "  " })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect((await refusal(w.leases.revoke({ leaseId: lease.id, epoch: lease.epoch, reason: "self" }))).reason).toBe("FORBIDDEN");
    expect((await refusal(operator.leases.revoke({ leaseId: lease.id, epoch: 7, reason: "wrong epoch" }))).detail.kind).toBe("unknown");
    expect((await refusal(operator.leases.revoke({ leaseId: "00000000-0000-4000-8000-000000000000", epoch: 1, reason: "none" }))).detail.kind).toBe("unknown");
    expect(await databaseSnapshot(sql)).toEqual(before);
    await advanceClockPast(sql, lease.expiresAt);
    expect((await refusal(operator.leases.revoke({ leaseId: lease.id, epoch: lease.epoch, reason: "too late" }))).detail.kind).toBe("expired");
    const second = (await w.leases.claim({ workItemId: "rv-refused", durationSeconds: 60 }))!;
    await w.leases.release({ leaseId: second.lease.id, epoch: second.lease.epoch, evidence: "done" });
    const ended = await refusal(operator.leases.revoke({ leaseId: second.lease.id, epoch: second.lease.epoch, reason: "after release" }));
    expect(ended).toMatchObject({ reason: "LEASE_NOT_CURRENT", detail: { kind: "ended", outcome: "released" } });
  });
});

describe("revoke races (real connections, gated on the item's row lock)", () => {
  /** Holds the item's row lock on a raw connection until `open` is called. */
  async function holdItem(database: TestDatabase, id: string) {
    const holder = await database.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM work_items WHERE id = $1 FOR UPDATE", [id]);
    return async () => {
      await holder.query("ROLLBACK");
      await holder.end();
    };
  }

  it("revoke vs release of the same lease: exactly one wins, and history agrees with the winner (12 rounds)", async ({ sql, people, database }) => {
    const { operator, agent } = people;
    const w = await agent("race-release");
    const winners = { revoke: 0, release: 0 };
    for (let round = 0; round < 12; round++) {
      const id = `rv-race-rel-${round}`;
      await operator.workItems.create({ id, title: "Raced" });
      const { lease } = (await w.leases.claim({ workItemId: id, durationSeconds: 300 }))!;
      const open = await holdItem(database, id);
      const revoke = settle(operator.leases.revoke({ leaseId: lease.id, epoch: lease.epoch, reason: `round ${round}` }));
      const release = settle(w.leases.release({ leaseId: lease.id, epoch: lease.epoch, evidence: "finished" }));
      await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(2);
      await open();
      const [revoked, released] = await Promise.all([revoke, release]);
      expect([revoked.ok, released.ok].filter(Boolean)).toHaveLength(1);
      const { rows: [stored] } = await sql.query("SELECT outcome FROM leases WHERE id = $1", [lease.id]);
      const { rows: [item] } = await sql.query("SELECT status, current_lease_id FROM work_items WHERE id = $1", [id]);
      const events = await endedEvents(sql, lease.id);
      expect(events).toHaveLength(1);
      if (revoked.ok) {
        winners.revoke++;
        expect(stored.outcome).toBe("revoked");
        expect(item).toEqual({ status: "open", current_lease_id: null });
        expect(released).toMatchObject({ ok: false, reason: "LEASE_NOT_CURRENT", detail: { kind: "revoked", reason: `round ${round}` } });
      } else {
        winners.release++;
        expect(stored.outcome).toBe("released");
        expect(item).toEqual({ status: "released", current_lease_id: null });
        expect(revoked).toMatchObject({ ok: false, reason: "LEASE_NOT_CURRENT", detail: { kind: "ended", outcome: "released" } });
      }
      expect(events[0]!.data.outcome).toBe(stored.outcome);
    }
    console.log(`revoke vs release winners: ${JSON.stringify(winners)}`);
  });

  it("revoke vs renew: the lease always ends revoked; a renewal either landed before it or is fenced as revoked (12 rounds)", async ({ sql, people, database }) => {
    const { operator, agent } = people;
    const w = await agent("race-renew");
    for (let round = 0; round < 12; round++) {
      const id = `rv-race-ren-${round}`;
      await operator.workItems.create({ id, title: "Raced" });
      const { lease } = (await w.leases.claim({ workItemId: id, durationSeconds: 300 }))!;
      const open = await holdItem(database, id);
      const revoke = settle(operator.leases.revoke({ leaseId: lease.id, epoch: lease.epoch, reason: "stop" }));
      const renew = settle(w.leases.renew({ leaseId: lease.id, epoch: lease.epoch, durationSeconds: 3600 }));
      await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(2);
      await open();
      const [revoked, renewed] = await Promise.all([revoke, renew]);
      expect(revoked.ok).toBe(true);
      const { rows: [stored] } = await sql.query("SELECT outcome, renewed_at, ended_at FROM leases WHERE id = $1", [lease.id]);
      expect(stored.outcome).toBe("revoked");
      const { rows: [item] } = await sql.query("SELECT current_lease_id, lease_expires_at FROM work_items WHERE id = $1", [id]);
      expect(item).toEqual({ current_lease_id: null, lease_expires_at: null });
      if (renewed.ok) expect(stored.renewed_at.getTime()).toBeLessThanOrEqual(stored.ended_at.getTime());
      else {
        expect(renewed).toMatchObject({ reason: "LEASE_NOT_CURRENT", detail: { kind: "revoked" } });
        expect(stored.renewed_at).toBeNull();
      }
    }
  });
});
