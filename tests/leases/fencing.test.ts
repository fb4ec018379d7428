import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import { describe, expect, vi } from "vitest";
import type { Lease } from "@work-graph/contract";
import { sweepExpiredLeases } from "../../server/operations/sweep";
import { actors, refusal, advanceClockPast, databaseClock, databaseTest } from "../support/fixtures";
import { databaseSnapshot } from "./support";

const it = databaseTest();

type Api = Awaited<ReturnType<Awaited<ReturnType<typeof actors>>["agent"]>>;

/** Every lease-bound write an agent can make, each presenting `leaseId` + `epoch`. */
const leaseWrites = (api: Api, leaseId: string, epoch: number) => ({
  renew: () => api.leases.renew({ leaseId, epoch, durationSeconds: 60 }),
  release: () => api.leases.release({ leaseId, epoch, evidence: "late" }),
  cancel: () => api.leases.cancel({ leaseId, epoch, reason: "late" }),
  note: () => api.leases.note({ leaseId, epoch, content: "late" }),
  decompose: () => api.leases.decompose({ leaseId, epoch, children: [{ title: "late child" }] }),
  attention: () => api.attention.request({ leaseId, epoch, kind: "help", question: "late?" }),
});

/** Runs every write; each must be refused with `reason` (+ detail.kind) and the database must not change at all. */
async function expectAllRefused(sql: pg.Client, writes: Record<string, () => Promise<unknown>>, reason: string, kind?: string) {
  const before = await databaseSnapshot(sql);
  for (const [name, write] of Object.entries(writes)) {
    const { reason: got, detail } = await refusal(write());
    expect({ name, reason: got, kind: kind && detail.kind }).toEqual({ name, reason, kind: kind && kind });
  }
  expect(await databaseSnapshot(sql)).toEqual(before);
}

describe("fencing", () => {
  it.for(["next-claim", "named claim", "sweep, then next-claim"])(
    "expired, then superseded by a reclaim (%s): the old worker's writes change nothing",
    async (variant, { database, sql, people }) => {
      const { operator, agent } = people;
      const slug = variant.replace(/[^a-z]+/g, "-");
      const a = await agent(`sleeper-${slug}`);
      const b = await agent(`rescuer-${slug}`);
      const id = `fenced-${slug}`;
      await operator.workItems.create({ id, title: "Fenced item", priority: 1_000_000_000 });
      const first = (await a.leases.claim({ workItemId: id, durationSeconds: 1 }))!;
      expect(first.lease.epoch).toBe(1);
      await advanceClockPast(sql, first.lease.expiresAt);

      // Expired, nobody reclaimed yet (no sweeper runs here unless asked).
      if (variant.startsWith("sweep")) {
        await sweepExpiredLeases(database.db);
        expect((await operator.leases.get({ leaseId: first.lease.id })).outcome).toBe("expired");
      } else {
        expect((await operator.leases.get({ leaseId: first.lease.id })).endedAt).toBeNull();
      }
      await expectAllRefused(sql, leaseWrites(a, first.lease.id, 1), "LEASE_NOT_CURRENT", "expired");

      const second = variant === "named claim"
        ? (await b.leases.claim({ workItemId: id, durationSeconds: 60 }))!
        : (await b.leases.claim({ durationSeconds: 60 }))!;
      expect(second.workItem.id).toBe(id);
      expect(second.lease.epoch).toBe(2);
      expect(second.lease.workerId).toBe(`rescuer-${slug}`);

      // Superseded: B's lease, the item and everything else stay exactly as they were.
      await expectAllRefused(sql, leaseWrites(a, first.lease.id, 1), "LEASE_NOT_CURRENT", "superseded");

      const history = await operator.leases.history({ workItemId: id });
      expect(history.map((lease) => [lease.epoch, lease.workerId, lease.outcome])).toEqual([
        [1, `sleeper-${slug}`, "expired"],
        [2, `rescuer-${slug}`, null],
      ]);
      expect(history[0]!.endedAt).toBe(history[0]!.expiresAt);
      expect(history[0]!.expiresAt).toBe(first.lease.expiresAt);
      expect(history[1]).toEqual(second.lease);
      const item = await operator.workItems.get({ id });
      expect(item.stage).toBe("leased");
      expect(item.currentLease).toEqual(second.lease);
      expect(item.previousWorkerId).toBe(`sleeper-${slug}`);
      // B's lease still works.
      const renewed = await b.leases.renew({ leaseId: second.lease.id, epoch: 2, durationSeconds: 60 });
      expect(renewed.epoch).toBe(2);
      const done = await b.leases.release({ leaseId: second.lease.id, epoch: 2, evidence: "rescued" });
      expect(done.workItem.status).toBe("released");
    },
  );

  it("unknown lease ids and epochs; ended leases", async ({ people, sql }) => {
    const { operator, agent } = people;
    const a = await agent("owner");
    await operator.workItems.create({ id: "owned", title: "Owned" });
    const { lease } = (await a.leases.claim({ workItemId: "owned", durationSeconds: 60 }))!;

    await expectAllRefused(sql, leaseWrites(a, crypto.randomUUID(), 1), "LEASE_NOT_CURRENT", "unknown");
    await expectAllRefused(sql, leaseWrites(a, lease.id, 2), "LEASE_NOT_CURRENT", "unknown");
    await expectAllRefused(sql, leaseWrites(a, lease.id, 0), "LEASE_NOT_CURRENT", "unknown");

    await a.leases.release({ leaseId: lease.id, epoch: 1, evidence: "shipped" });
    await expectAllRefused(sql, leaseWrites(a, lease.id, 1), "LEASE_NOT_CURRENT", "ended");
    const { detail } = await refusal(a.leases.renew({ leaseId: lease.id, epoch: 1 }));
    expect(detail).toMatchObject({ kind: "ended", outcome: "released" });
  });

  it("another worker's lease is FORBIDDEN to an agent; an admin naming the worker may act; an operator may not use leases.*", async ({ people, sql }) => {
    const { operator, agent, admin } = people;
    const owner = await agent("rightful");
    const intruder = await agent("intruder");
    await operator.workItems.create({ id: "guarded", title: "Guarded" });
    const { lease } = (await owner.leases.claim({ workItemId: "guarded", durationSeconds: 60 }))!;

    await expectAllRefused(sql, leaseWrites(intruder, lease.id, 1), "FORBIDDEN");
    // An agent cannot name another worker either.
    expect(await refusal(intruder.leases.renew({ leaseId: lease.id, epoch: 1, workerId: "rightful" }))).toMatchObject({ reason: "FORBIDDEN" });
    expect(await refusal(intruder.leases.claim({ workerId: "rightful" }))).toMatchObject({ reason: "FORBIDDEN" });

    const operatorWrites = {
      claim: () => operator.leases.claim({ durationSeconds: 60 }),
      ...leaseWrites(operator as unknown as Api, lease.id, 1),
    };
    await expectAllRefused(sql, operatorWrites, "FORBIDDEN");

    // Admin: acts for the lease's worker when it names it, is refused when it names another.
    expect(await refusal(admin.leases.renew({ leaseId: lease.id, epoch: 1, workerId: "intruder" }))).toMatchObject({ reason: "FORBIDDEN" });
    const renewed = await admin.leases.renew({ leaseId: lease.id, epoch: 1, durationSeconds: 120, workerId: "rightful" });
    expect(renewed.workerId).toBe("rightful");
    const note = await admin.leases.note({ leaseId: lease.id, epoch: 1, content: "from the admin", workerId: "rightful" });
    expect(note.workerId).toBe("rightful");
    const released = await admin.leases.release({ leaseId: lease.id, epoch: 1, evidence: "admin finished it", workerId: "rightful" });
    expect(released.lease).toMatchObject({ workerId: "rightful", outcome: "released" });
    // An admin claim needs a worker and records that worker.
    await operator.workItems.create({ id: "admin-claimed", title: "Admin claimed", priority: 1_000_000_000 });
    expect(await refusal(admin.leases.claim({ workItemId: "admin-claimed" }))).toMatchObject({ reason: "VALIDATION" });
    const claimed = (await admin.leases.claim({ workItemId: "admin-claimed", workerId: "delegate", durationSeconds: 60 }))!;
    expect(claimed.lease.workerId).toBe("delegate");
    await admin.leases.release({ leaseId: claimed.lease.id, epoch: 1, evidence: "done", workerId: "delegate" });
  });

  it("a release racing a reclaim of its expired lease: the reclaim wins, every time", async ({ sql, people }) => {
    const { operator, agent } = people;
    const a = await agent("racer-a");
    const b = await agent("racer-b");
    const ids = Array.from({ length: 25 }, (_, round) => `race-${round}`);
    const leases: Lease[] = [];
    for (const id of ids) {
      await operator.workItems.create({ id, title: id });
      leases.push((await a.leases.claim({ workItemId: id, durationSeconds: 1 }))!.lease);
    }
    await advanceClockPast(sql, leases.at(-1)!.expiresAt);
    await Promise.all(
      ids.map(async (id, round) => {
        const [released, reclaimed] = await Promise.allSettled([
          a.leases.release({ leaseId: leases[round]!.id, epoch: 1, evidence: "late" }),
          b.leases.claim({ workItemId: id, durationSeconds: 60 }),
        ]);
        // The lease had expired: the release is fenced (expired or already superseded), the reclaim wins.
        expect(released.status).toBe("rejected");
        expect(reclaimed.status).toBe("fulfilled");
        expect(["expired", "superseded"]).toContain(await refusal(Promise.reject((released as PromiseRejectedResult).reason)).then((r) => r.detail.kind));
        const history = await operator.leases.history({ workItemId: id });
        expect(history.map((l) => [l.epoch, l.workerId, l.outcome])).toEqual([[1, "racer-a", "expired"], [2, "racer-b", null]]);
        expect(history[0]!.endedAt).toBe(history[0]!.expiresAt);
      }),
    );
  });

  it("a release racing a reclaim around the expiry instant: exactly one wins, history stays consistent", async ({ people, sql }) => {
    const { operator, agent } = people;
    // Earlier tests of this file moved the database clock: read this machine's time on it.
    const clockOffset = (await databaseClock(sql)).getTime() - Date.now();
    const a = await agent("edge-a");
    const b = await agent("edge-b");
    const rounds = 24;
    const tally = { released: 0, reclaimed: 0 };
    await Promise.all(
      Array.from({ length: rounds }, async (_, round) => {
        const id = `edge-race-${round}`;
        await operator.workItems.create({ id, title: id });
        const lease = (await a.leases.claim({ workItemId: id, durationSeconds: 4 }))!.lease;
        // Fire both from 3 s before to 1 s after the expiry: the earliest rounds release a live lease even on a loaded machine,
        // the latest find it expired whatever the latency, and the ones near the instant race.
        await sleep(Math.max(0, Date.parse(lease.expiresAt) - (Date.now() + clockOffset) - 3000 + (round * 4000) / (rounds - 1)));
        const reclaim = async () => {
          // A named claim is refused while the lease is live: retry until it is not.
          for (;;) {
            try {
              return await b.leases.claim({ workItemId: id, durationSeconds: 60 });
            } catch (error) {
              const { reason, detail } = await refusal(Promise.reject(error));
              if (reason !== "NOT_CLAIMABLE" || detail.stage !== "leased") throw error;
              await sleep(2);
            }
          }
        };
        const [released, reclaimed] = await Promise.allSettled([
          a.leases.release({ leaseId: lease.id, epoch: 1, evidence: "just in time?" }),
          reclaim(),
        ]);
        expect([released.status, reclaimed.status].filter((status) => status === "fulfilled")).toHaveLength(1);
        const history = await operator.leases.history({ workItemId: id });
        if (released.status === "fulfilled") {
          tally.released++;
          expect(await refusal(Promise.reject((reclaimed as PromiseRejectedResult).reason))).toMatchObject({
            reason: "NOT_CLAIMABLE",
            detail: { stage: "released" },
          });
          expect(history.map((l) => [l.epoch, l.outcome])).toEqual([[1, "released"]]);
          expect((await operator.workItems.get({ id })).status).toBe("released");
        } else {
          tally.reclaimed++;
          expect(await refusal(Promise.reject(released.reason))).toMatchObject({ reason: "LEASE_NOT_CURRENT" });
          expect(history.map((l) => [l.epoch, l.workerId, l.outcome])).toEqual([[1, "edge-a", "expired"], [2, "edge-b", null]]);
          expect(history[0]!.endedAt).toBe(history[0]!.expiresAt);
          expect((await operator.workItems.get({ id })).currentLease?.epoch).toBe(2);
        }
      }),
    );
    // Both outcomes happened: the race was really run on both sides of the instant.
    expect(tally.released).toBeGreaterThan(0);
    expect(tally.reclaimed).toBeGreaterThan(0);
  }, 60_000);

  it("a live release racing a named reclaim: the release wins, the claim is refused", async ({ people }) => {
    const { operator, agent } = people;
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
      expect(await refusal(Promise.reject((reclaimed as PromiseRejectedResult).reason))).toMatchObject({ reason: "NOT_CLAIMABLE" });
      const history = await operator.leases.history({ workItemId: id });
      expect(history.map((l) => [l.epoch, l.outcome])).toEqual([[1, "released"]]);
    }
  });
});

describe("a wrong app clock changes no decision: times and expiry come from the database", () => {
  const databaseNow = async (sql: pg.Client) => (await databaseClock(sql)).getTime();

  it("app clock hours ahead: a fresh lease is live, renewable and not swept; times are the database's", async ({ database, people, sql }) => {
    const { operator, agent } = people;
    const a = await agent("clock-ahead");
    await operator.workItems.create({ id: "clock-ahead", title: "Clock ahead" });
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(new Date(Date.now() + 5 * 3600_000));
      const claimed = (await a.leases.claim({ workItemId: "clock-ahead", durationSeconds: 60 }))!;
      const now = await databaseNow(sql);
      expect(Math.abs(Date.parse(claimed.lease.acquiredAt) - now)).toBeLessThan(5_000);
      expect(Math.abs(Date.parse(claimed.lease.expiresAt) - (now + 60_000))).toBeLessThan(5_000);
      await sweepExpiredLeases(database.db);
      expect((await operator.leases.get({ leaseId: claimed.lease.id })).endedAt).toBeNull();
      const item = await operator.workItems.get({ id: "clock-ahead" });
      expect(item.stage).toBe("leased");
      expect((await operator.leases.active()).map((l) => l.id)).toContain(claimed.lease.id);
      const renewed = await a.leases.renew({ leaseId: claimed.lease.id, epoch: 1, durationSeconds: 30 });
      expect(Math.abs(Date.parse(renewed.expiresAt) - (now + 30_000))).toBeLessThan(5_000);
      expect(Math.abs(Date.parse(renewed.renewedAt!) - now)).toBeLessThan(5_000);
      // A reclaim attempt sees a live lease, whatever the app thinks the time is.
      expect(await refusal((await agent("clock-thief")).leases.claim({ workItemId: "clock-ahead" }))).toMatchObject({
        reason: "NOT_CLAIMABLE",
        detail: { stage: "leased" },
      });
      const health = await operator.health.check();
      expect(Math.abs(Date.parse(health.now) - now)).toBeLessThan(5_000);
      await a.leases.release({ leaseId: claimed.lease.id, epoch: 1, evidence: "done" });
    } finally {
      vi.useRealTimers();
    }
  });

  it("app clock hours behind: an expired lease is fenced, swept with endedAt = expiresAt, and reclaimable", async ({ database, sql, people }) => {
    const { operator, agent } = people;
    const a = await agent("clock-behind");
    await operator.workItems.create({ id: "clock-behind", title: "Clock behind" });
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(new Date(Date.now() - 5 * 3600_000));
      const claimed = (await a.leases.claim({ workItemId: "clock-behind", durationSeconds: 1 }))!;
      expect(Math.abs(Date.parse(claimed.lease.expiresAt) - ((await databaseNow(sql)) + 1_000))).toBeLessThan(5_000);
      await advanceClockPast(sql, claimed.lease.expiresAt);
      expect(await refusal(a.leases.renew({ leaseId: claimed.lease.id, epoch: 1 }))).toMatchObject({
        reason: "LEASE_NOT_CURRENT",
        detail: { kind: "expired" },
      });
      expect((await operator.workItems.get({ id: "clock-behind" })).stage).toBe("ready");
      await sweepExpiredLeases(database.db);
      const ended = await operator.leases.get({ leaseId: claimed.lease.id });
      expect(ended.outcome).toBe("expired");
      expect(ended.endedAt).toBe(claimed.lease.expiresAt);
      const reclaimed = (await (await agent("clock-rescuer")).leases.claim({ workItemId: "clock-behind", durationSeconds: 60 }))!;
      expect(reclaimed.lease.epoch).toBe(2);
      expect(Date.parse(reclaimed.lease.acquiredAt)).toBeGreaterThan(Date.parse(claimed.lease.expiresAt));
    } finally {
      vi.useRealTimers();
    }
  });
});
