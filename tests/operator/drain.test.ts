import type pg from "pg";
import { describe, expect } from "vitest";
import { advanceClock, refusal, databaseTest, lockWaiters } from "../support/fixtures";
import { callerAs } from "../support/app";
import { settle } from "./support";

const it = databaseTest();

const leasesOf = async (sql: pg.Client, workerId: string) =>
  (await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM leases WHERE worker_id = $1", [workerId])).rows[0]!.n;

describe("workers.drain / undrain", () => {
  it("a drained worker's next and named claims fail with WORKER_DRAINED; its held lease keeps working; undrain lets it claim again", async ({ people, sql }) => {
    const { operator, agent } = people;
    const w = await agent("dr-basic");
    await operator.workItems.create({ id: "dr-held", title: "Held" });
    await operator.workItems.create({ id: "dr-held-2", title: "Held too" });
    await operator.workItems.create({ id: "dr-next", title: "Would be next" });
    const held = (await w.leases.claim({ workItemId: "dr-held", durationSeconds: 300 }))!.lease;
    const held2 = (await w.leases.claim({ workItemId: "dr-held-2", durationSeconds: 300 }))!.lease;

    const drained = await operator.workers.drain({ workerId: "dr-basic", reason: "deploying a new version" });
    expect(drained).toMatchObject({ workerId: "dr-basic", drained: true, drainReason: "deploying a new version", liveLeases: 2 });

    for (const attempt of [() => w.leases.claim({ durationSeconds: 60 }), () => w.leases.claim({ workItemId: "dr-next", durationSeconds: 60 })]) {
      const refused = await refusal(attempt());
      expect(refused).toMatchObject({ reason: "WORKER_DRAINED", detail: { workerId: "dr-basic", reason: "deploying a new version" } });
    }
    // decompose with claimChildId is a claim too; without it, it works as usual.
    expect((await refusal(w.leases.decompose({ leaseId: held2.id, epoch: held2.epoch, children: [{ id: "dr-child", title: "c" }], claimChildId: "dr-child" }))).reason)
      .toBe("WORKER_DRAINED");
    expect((await operator.workItems.get({ id: "dr-held-2" })).currentLease?.id).toBe(held2.id);
    await w.leases.decompose({ leaseId: held2.id, epoch: held2.epoch, children: [{ id: "dr-child", title: "c" }] });
    // Everything with the lease it holds works.
    await w.leases.renew({ leaseId: held.id, epoch: held.epoch, durationSeconds: 300 });
    await w.leases.note({ leaseId: held.id, epoch: held.epoch, content: "still going" });
    await w.leases.release({ leaseId: held.id, epoch: held.epoch, evidence: "finished before leaving" });
    expect(await leasesOf(sql, "dr-basic")).toBe(2);
    expect((await operator.workItems.get({ id: "dr-next" })).stage).toBe("ready");

    // Another worker is not affected.
    const other = await agent("dr-other");
    expect((await other.leases.claim({ workItemId: "dr-next", durationSeconds: 60 }))?.lease.workerId).toBe("dr-other");

    expect((await operator.workers.undrain({ workerId: "dr-basic" }))).toMatchObject({ drained: false, drainReason: null });
    await operator.workItems.create({ id: "dr-after", title: "After undrain", priority: 1_000_000 });
    expect((await w.leases.claim({ durationSeconds: 60 }))?.workItem.id).toBe("dr-after");
  });

  it("only operators and admins drain; a worker never seen can be drained ahead of time", async ({ people }) => {
    const { operator, admin, agent } = people;
    const w = await agent("dr-self");
    expect((await refusal(w.workers.drain({ workerId: "dr-self" }))).reason).toBe("FORBIDDEN");
    expect((await refusal(w.workers.undrain({ workerId: "dr-self" }))).reason).toBe("FORBIDDEN");
    expect(await admin.workers.drain({ workerId: "dr-future" })).toMatchObject({ workerId: "dr-future", drained: true, drainReason: null, liveLeases: 0, lastSeenAt: null });
    const future = await agent("dr-future");
    await operator.workItems.create({ id: "dr-future-item", title: "x" });
    expect((await refusal(future.leases.claim({ workItemId: "dr-future-item", durationSeconds: 60 }))).reason).toBe("WORKER_DRAINED");
    // An admin claiming for a drained worker is refused too.
    expect((await refusal(admin.leases.claim({ workItemId: "dr-future-item", workerId: "dr-future", durationSeconds: 60 }))).reason).toBe("WORKER_DRAINED");
    // Draining again updates the reason.
    expect(await operator.workers.drain({ workerId: "dr-future", reason: "second thoughts" })).toMatchObject({ drained: true, drainReason: "second thoughts" });
  });
});

describe("drain vs claim (real connections)", () => {
  it("a claim in flight when the drain starts commits first: the drain waits for it and sees its lease", async ({ database, sql, people }) => {
    const { operator, agent } = people;
    const w = await agent("dr-inflight");
    await operator.workItems.create({ id: "dr-inflight", title: "x" });
    // Pause the named claim on the item's row lock (it has already passed the drain check).
    const holder = await database.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM work_items WHERE id = 'dr-inflight' FOR UPDATE");
    const claim = settle(w.leases.claim({ workItemId: "dr-inflight", durationSeconds: 60 }));
    await expect.poll(() => lockWaiters(sql, { locktype: "transactionid" })).toBeGreaterThanOrEqual(1);
    const drain = settle(operator.workers.drain({ workerId: "dr-inflight", reason: "now" }));
    await expect.poll(() => lockWaiters(sql, { locktype: "advisory" })).toBeGreaterThanOrEqual(1); // the drain waits for the claim
    await holder.query("ROLLBACK");
    const [claimed, drained] = await Promise.all([claim, drain]);
    expect(claimed.ok).toBe(true);
    expect(drained).toMatchObject({ ok: true, value: { drained: true, liveLeases: 1 } });
  });

  it("a claim that arrives while a drain is uncommitted waits, then is refused: no lease after the drain", async ({ database, sql, people }) => {
    const { operator, agent } = people;
    const w = await agent("dr-pending");
    await operator.workItems.create({ id: "dr-pending", title: "x" });
    await operator.workers.drain({ workerId: "dr-pending" });
    await operator.workers.undrain({ workerId: "dr-pending" }); // leaves a worker_drains row to hold
    const holder = await database.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM worker_drains WHERE worker_id = 'dr-pending' FOR UPDATE");
    const drain = settle(operator.workers.drain({ workerId: "dr-pending", reason: "pending" }));
    await expect.poll(() => lockWaiters(sql, { locktype: "transactionid" })).toBeGreaterThanOrEqual(1); // the drain holds the worker lock, waits for the row
    const claim = settle(w.leases.claim({ workItemId: "dr-pending", durationSeconds: 60 }));
    await expect.poll(() => lockWaiters(sql, { locktype: "advisory" })).toBeGreaterThanOrEqual(1);
    await holder.query("ROLLBACK");
    const [drained, claimed] = await Promise.all([drain, claim]);
    expect(drained.ok).toBe(true);
    expect(claimed).toMatchObject({ ok: false, reason: "WORKER_DRAINED" });
    expect(await leasesOf(sql, "dr-pending")).toBe(0);
  });

  it("40 rounds of a drain racing a claim: every lease of the worker was visible to the drain when it committed", async ({ people, sql }) => {
    const { operator, agent } = people;
    const outcomes = { claimFirst: 0, refused: 0 };
    for (let round = 0; round < 40; round++) {
      const workerId = `dr-race-${round}`;
      const w = await agent(workerId);
      await operator.workItems.create({ id: `dr-race-${round}`, title: "x", priority: -1000 });
      const [claimed, drained] = await Promise.all([
        settle(w.leases.claim({ workItemId: `dr-race-${round}`, durationSeconds: 60 })),
        settle(operator.workers.drain({ workerId })),
      ]);
      expect(drained.ok).toBe(true);
      const leases = await leasesOf(sql, workerId);
      // The drain counted the worker's live leases inside its transaction, after taking the
      // worker lock: a lease created after the drain committed would be missing from it.
      expect(drained.ok && drained.value.liveLeases).toBe(leases);
      if (claimed.ok) outcomes.claimFirst++;
      else {
        expect(claimed.reason).toBe("WORKER_DRAINED");
        outcomes.refused++;
      }
    }
    console.log(`drain vs claim: ${JSON.stringify(outcomes)}`);
  });
});

describe("workers.list", () => {
  it("shows every worker with live leases, last seen, last-hour counts and drained state, most recently seen first", async ({ database, sql, people }) => {
    const { operator, agent } = people;
    const a = await agent("wl-a");
    const b = await agent("wl-b");
    await callerAs(database.instance, "agent", "wl-never"); // has a token, never acted
    for (const id of ["wl-1", "wl-2", "wl-3", "wl-4"]) await operator.workItems.create({ id, title: id });
    const l1 = (await a.leases.claim({ workItemId: "wl-1", durationSeconds: 60 }))!.lease;
    await a.leases.release({ leaseId: l1.id, epoch: l1.epoch, evidence: "ok" });
    const l2 = (await a.leases.claim({ workItemId: "wl-2", durationSeconds: 60 }))!.lease;
    const l3 = (await a.leases.claim({ workItemId: "wl-3", durationSeconds: 60 }))!.lease;
    const revoked = await operator.leases.revoke({ leaseId: l2.id, epoch: l2.epoch, reason: "stop" });
    const l4 = (await b.leases.claim({ workItemId: "wl-4", durationSeconds: 60 }))!.lease;
    await b.leases.note({ leaseId: l4.id, epoch: l4.epoch, content: "b was here last" });
    await operator.workers.drain({ workerId: "wl-a", reason: "maintenance" });

    const workers = await operator.workers.list({});
    const byId = new Map(workers.map((worker) => [worker.workerId, worker]));
    expect(byId.get("wl-a")).toMatchObject({
      liveLeases: 1, drained: true, drainReason: "maintenance", lastHour: { claimed: 3, released: 1, expired: 0, revoked: 1 },
    });
    expect(byId.get("wl-b")).toMatchObject({ liveLeases: 1, drained: false, drainReason: null, lastHour: { claimed: 1, released: 0, expired: 0, revoked: 0 } });
    expect(byId.get("wl-never")).toMatchObject({ liveLeases: 0, lastSeenAt: null, lastHour: { claimed: 0, released: 0, expired: 0, revoked: 0 } });
    // b was last seen writing its note (after its claim).
    const { rows: [noteAt] } = await sql.query("SELECT created_at FROM notes WHERE lease_id = $1", [l4.id]);
    const bSeen = Date.parse(byId.get("wl-b")!.lastSeenAt!);
    expect(bSeen).toBeGreaterThan(Date.parse(l4.acquiredAt));
    expect(Math.abs(bSeen - noteAt.created_at.getTime())).toBeLessThan(100);
    // The revocation is the operator's act, not the worker's: a's last sighting is its third claim.
    const aSeen = Date.parse(byId.get("wl-a")!.lastSeenAt!);
    expect(aSeen).toBeGreaterThanOrEqual(Date.parse(l3.acquiredAt));
    expect(aSeen).toBeLessThan(Date.parse(revoked.lease.endedAt!));
    const order = workers.map((worker) => worker.workerId);
    expect(order.indexOf("wl-b")).toBeLessThan(order.indexOf("wl-a"));
    expect(order.indexOf("wl-a")).toBeLessThan(order.indexOf("wl-never"));
    // Any role may read it.
    expect((await a.workers.list({})).length).toBe(workers.length);
  });
});

describe("tokens.list lastUsedAt", () => {
  it("is null until used, set on use, and written at most once a minute per token", async ({ database, sql, people }) => {
    const { admin } = people;
    const { token } = await admin.tokens.create({ role: "agent", workerId: "lu-agent", label: "last-used" });
    const find = async () => (await admin.tokens.list()).find((entry) => entry.label === "last-used")!;
    expect((await find()).lastUsedAt).toBeNull();
    const { authenticate, forgetAuthenticatedTokens } = await import("../../server/auth/tokens");
    await authenticate(database.db, token);
    const first = (await find()).lastUsedAt;
    expect(first).not.toBeNull();
    const { rows: [before] } = await sql.query("SELECT xmin::text FROM api_tokens WHERE label = 'last-used'");
    for (let i = 0; i < 5; i++) await authenticate(database.db, token);
    const { rows: [after] } = await sql.query("SELECT xmin::text FROM api_tokens WHERE label = 'last-used'");
    expect(after.xmin).toBe(before.xmin); // not rewritten within the minute
    expect((await find()).lastUsedAt).toBe(first);
    // Older than a minute: the next use writes it again.
    await advanceClock(sql, 61);
    forgetAuthenticatedTokens(database.db); // the next call reads the token row again instead of the 1 s cache
    await authenticate(database.db, token);
    expect(Date.parse((await find()).lastUsedAt!)).toBeGreaterThan(Date.parse(first!) - 1000);
  });
});
