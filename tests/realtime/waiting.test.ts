import type pg from "pg";
import { describe, expect } from "vitest";
import type { Instance } from "../../server/instance";
import { callerAs, type TestClient } from "../support/app";
import { twoInstanceTest, advanceClockPast } from "../support/fixtures";

/*
 * API.md "Waiting instead of polling": a waiting claim (or attention.wait) is woken by the
 * commit that made work ready, through PostgreSQL, so two app instances on one database
 * wake each other. Instance A = the test database's client (the causes are made there),
 * instance B = a second client on the same database with its own listener and HTTP server
 * (the waiters wait there). Every wait is gated on B's waiter count, not on a sleep, and what
 * is asserted is what happened and in which order, not how many milliseconds it took.
 */

const it = twoInstanceTest()
  .extend("other", { scope: "file" }, ({ people }) => people.agent("other-worker"))
  .extend("waiterB", { scope: "file" }, async ({ database, serverB }) => serverB.client((await callerAs(database.instance, "agent", "waiter")).token));

const readyCount = async (sql: pg.Client) =>
  Number((await sql.query(`SELECT count(*) FROM work_items WHERE status = 'open' AND open_dependency_count = 0
    AND ancestor_dependency_count = 0 AND open_child_count = 0 AND blocking_attention_count = 0 AND current_lease_id IS NULL`)).rows[0].count);

const databaseNow = async (sql: pg.Client) => Date.parse((await sql.query<{ now: Date }>("SELECT work_graph_clock() AS now")).rows[0]!.now.toISOString());

/**
 * Starts a waiting claim (30 s) on instance B, waits until it is parked there, runs `cause` on
 * instance A. What happened, not how fast: the claim returned a lease on what `cause` made
 * ready (a wait that is never woken returns null when its time is up), acquired after the wait
 * began and before its time ran out (database clock).
 */
async function claimWokenBy(
  { sql, instanceB, waiterB }: { sql: pg.Client; instanceB: Instance; waiterB: TestClient },
  cause: () => Promise<unknown>,
  input: { idempotencyKey?: string } = {},
) {
  expect(await readyCount(sql)).toBe(0);
  const hubB = instanceB.wakeups;
  const before = hubB.waitingClaims;
  const waitSeconds = 30;
  const waitStartedAt = await databaseNow(sql);
  const waiting = waiterB.leases.claim.mutate({ waitSeconds, durationSeconds: 60, ...input });
  await expect.poll(() => hubB.waitingClaims, { message: "the claim to wait on instance B" }).toBe(before + 1);
  await cause();
  const result = await waiting;
  expect(result, "the waiting claim got nothing").not.toBeNull();
  const acquiredAt = Date.parse(result!.lease.acquiredAt);
  expect(acquiredAt).toBeGreaterThan(waitStartedAt);
  expect(acquiredAt).toBeLessThan(waitStartedAt + waitSeconds * 1000);
  return { result };
}

describe("leases.claim with waitSeconds, across two app instances: the claim waiting on B is woken by", () => {
  it("an item created", async ({ people, sql, instanceB, waiterB }) => {
    const { result } = await claimWokenBy({ sql, instanceB, waiterB }, () => people.operator.workItems.create({ id: "created-later", title: "Created later" }));
    expect(result?.workItem.id).toBe("created-later");
  });

  for (const finish of ["release", "cancel"] as const) {
    it(`a blocker ${finish === "release" ? "released" : "cancelled"}`, async ({ people, other, sql, instanceB, waiterB }) => {
      await people.operator.workItems.create({ id: `blocker-${finish}`, title: "Blocker" });
      await people.operator.workItems.create({ id: `dependent-${finish}`, title: "Dependent", dependsOn: [`blocker-${finish}`] });
      const held = (await other.leases.claim({ workItemId: `blocker-${finish}` }))!.lease;
      const { result } = await claimWokenBy({ sql, instanceB, waiterB }, () =>
        finish === "release"
          ? other.leases.release({ leaseId: held.id, epoch: held.epoch, evidence: "done" })
          : other.leases.cancel({ leaseId: held.id, epoch: held.epoch, reason: "not needed" }),
      );
      expect(result?.workItem.id).toBe(`dependent-${finish}`);
    });
  }

  it("an attention request resolved", async ({ people, other, sql, instanceB, waiterB }) => {
    await people.operator.workItems.create({ id: "asked", title: "Asked" });
    const held = (await other.leases.claim({ workItemId: "asked" }))!.lease;
    const { request } = await other.attention.request({ leaseId: held.id, epoch: held.epoch, kind: "decision", question: "Which way?" });
    const { result } = await claimWokenBy({ sql, instanceB, waiterB }, () => people.operator.attention.resolve({ id: request.id, resolution: "left" }));
    expect(result?.workItem.id).toBe("asked");
  });

  it("a child finishing (the parent is ready again)", async ({ people, other, sql, instanceB, waiterB }) => {
    await people.operator.workItems.create({ id: "parent", title: "Parent" });
    await people.operator.workItems.create({ id: "only-child", title: "Child", parentId: "parent" });
    const held = (await other.leases.claim({ workItemId: "only-child" }))!.lease;
    const { result } = await claimWokenBy({ sql, instanceB, waiterB }, () => other.leases.release({ leaseId: held.id, epoch: held.epoch, evidence: "done" }));
    expect(result?.workItem.id).toBe("parent");
  });

  it("a decomposition (its children are ready)", async ({ people, other, sql, instanceB, waiterB }) => {
    await people.operator.workItems.create({ id: "big", title: "Big" });
    const held = (await other.leases.claim({ workItemId: "big" }))!.lease;
    const { result } = await claimWokenBy({ sql, instanceB, waiterB }, () =>
      other.leases.decompose({ leaseId: held.id, epoch: held.epoch, children: [{ id: "small", title: "Small" }] }),
    );
    expect(result?.workItem.id).toBe("small");
    const small = result!.lease;
    await waiterB.leases.release.mutate({ leaseId: small.id, epoch: small.epoch, evidence: "done" });
    const parent = (await other.leases.claim({ workItemId: "big" }))!.lease; // keep "big" out of the next tests
    await other.leases.release({ leaseId: parent.id, epoch: parent.epoch, evidence: "done" });
  });

  it("a lease revoked by an operator (the item is ready again)", async ({ people, other, sql, instanceB, waiterB }) => {
    await people.operator.workItems.create({ id: "taken-back", title: "Taken back" });
    const held = (await other.leases.claim({ workItemId: "taken-back" }))!.lease;
    const { result } = await claimWokenBy({ sql, instanceB, waiterB }, () => people.operator.leases.revoke({ leaseId: held.id, epoch: held.epoch, reason: "reassigning" }));
    expect(result?.workItem.id).toBe("taken-back");
    expect(result?.lease.epoch).toBe(2);
    await waiterB.leases.release.mutate({ leaseId: result!.lease.id, epoch: result!.lease.epoch, evidence: "done" });
  });

  it("a dependency removed", async ({ people, other, sql, instanceB, waiterB }) => {
    await people.operator.workItems.create({ id: "gate", title: "Gate" });
    await people.operator.workItems.create({ id: "gated", title: "Gated", dependsOn: ["gate"] });
    const gate = (await other.leases.claim({ workItemId: "gate" }))!.lease;
    const { result } = await claimWokenBy({ sql, instanceB, waiterB }, () => people.operator.workItems.removeDependency({ workItemId: "gated", dependsOnId: "gate" }));
    expect(result?.workItem.id).toBe("gated");
    await other.leases.release({ leaseId: gate.id, epoch: gate.epoch, evidence: "done" });
  });

  it("a lease expiring (no transaction makes it ready): the claim takes it once its expiresAt has passed", async ({ people, other, sql, instanceB, waiterB }) => {
    await people.operator.workItems.create({ id: "abandoned", title: "Abandoned" });
    const held = (await other.leases.claim({ workItemId: "abandoned", durationSeconds: 2 }))!.lease;
    const { result } = await claimWokenBy({ sql, instanceB, waiterB }, () => advanceClockPast(sql, held.expiresAt));
    expect(result?.workItem.id).toBe("abandoned");
    expect(result?.lease.epoch).toBe(2);
    // Both times are the database clock: the new lease begins after the old one expired.
    expect(Date.parse(result!.lease.acquiredAt)).toBeGreaterThanOrEqual(Date.parse(held.expiresAt));
  });
});

describe("leases.claim with waitSeconds", () => {
  it("a named claim waits for that item and claims it once it is ready", async ({ people, other, instanceB, waiterB }) => {
    await people.operator.workItems.create({ id: "named-gate", title: "Gate" });
    await people.operator.workItems.create({ id: "named-target", title: "Target", dependsOn: ["named-gate"] });
    const gate = (await other.leases.claim({ workItemId: "named-gate" }))!.lease;
    const hubB = instanceB.wakeups;
    const waiting = waiterB.leases.claim.mutate({ workItemId: "named-target", waitSeconds: 30 });
    await expect.poll(() => hubB.waitingClaims, { message: "the named claim to wait" }).toBe(1);
    await other.leases.release({ leaseId: gate.id, epoch: gate.epoch, evidence: "done" });
    expect((await waiting)?.workItem.id).toBe("named-target");

    // Time up: the answer an immediate claim would give (NOT_CLAIMABLE with the stage); a terminal item is refused at once.
    await expect(waiterB.leases.claim.mutate({ workItemId: "named-target", waitSeconds: 0.3 })).rejects.toMatchObject({
      data: { reason: "NOT_CLAIMABLE", detail: { stage: "leased" } },
    });
    const started = performance.now();
    await expect(waiterB.leases.claim.mutate({ workItemId: "named-gate", waitSeconds: 30 })).rejects.toMatchObject({
      data: { reason: "NOT_CLAIMABLE", detail: { stage: "released" } },
    });
    expect(performance.now() - started, "refused before its 30 s were up").toBeLessThan(10_000);
  });

  it("returns null when the time is up, not before; waitSeconds is validated", async ({ sql, instanceB, waiterB }) => {
    expect(await readyCount(sql)).toBe(0);
    const started = performance.now();
    expect(await waiterB.leases.claim.mutate({ waitSeconds: 0.5 })).toBeNull();
    expect(performance.now() - started, "waited its 0.5 s").toBeGreaterThanOrEqual(450);
    expect(instanceB.wakeups.waitingClaims).toBe(0);
    for (const waitSeconds of [-1, 61, "5"]) {
      await expect(waiterB.leases.claim.mutate({ waitSeconds } as never)).rejects.toMatchObject({ data: { reason: "VALIDATION" } });
    }
  });

  it("an idempotency key: a wait that found nothing stores nothing, so the same key claims later and replays that", async ({ people, sql, instanceB, waiterB }) => {
    expect(await waiterB.leases.claim.mutate({ waitSeconds: 0.2, idempotencyKey: "wait-key" })).toBeNull();
    const { result } = await claimWokenBy({ sql, instanceB, waiterB }, () => people.operator.workItems.create({ id: "keyed", title: "Keyed" }), { idempotencyKey: "wait-key" });
    expect(result?.workItem.id).toBe("keyed");
    const replay = await waiterB.leases.claim.mutate({ waitSeconds: 30, durationSeconds: 60, idempotencyKey: "wait-key" });
    expect(replay?.lease.id).toBe(result!.lease.id);
  });
});

describe("fairness", () => {
  it("50 claims waiting on two instances, one item: one lease, the other 49 keep waiting, then each gets one of 49 more", async ({ database, sql, people, instanceB }) => {
    expect(await readyCount(sql)).toBe(0);
    const hubA = database.instance.wakeups;
    const hubB = instanceB.wakeups;
    const agents = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => (await callerAs(i % 2 === 0 ? database.instance : instanceB, "agent", `fair-${i}`)).api),
    );
    const settled: (string | null)[] = [];
    const waits = agents.map((api) =>
      api.leases.claim({ waitSeconds: 45, durationSeconds: 300 }).then((result) => {
        settled.push(result ? result.workItem.id : null);
        return result;
      }),
    );
    await expect.poll(() => hubA.waitingClaims + hubB.waitingClaims, { message: "50 waiting claims", timeout: 20_000 }).toBe(50);

    await people.operator.workItems.create({ id: "the-one", title: "The one" });
    await expect.poll(() => settled.length, { message: "one claim to get the item" }).toBe(1);
    // Every instance has heard the commit and tried: give the losers' dispatch rounds time to finish, gated on state.
    await expect.poll(async () => (await sql.query("SELECT count(*) FROM leases WHERE work_item_id = 'the-one'")).rows[0].count, { message: "the lease row" }).toBe("1");
    expect(settled).toEqual(["the-one"]);
    expect(hubA.waitingClaims + hubB.waitingClaims).toBe(49);

    for (let i = 0; i < 49; i++) await people.operator.workItems.create({ id: `more-${i}`, title: "More" });
    const results = await Promise.all(waits);
    expect(results.every((result) => result !== null)).toBe(true);
    const ids = results.map((result) => result!.workItem.id);
    expect(new Set(ids).size).toBe(50);
    const { rows } = await sql.query("SELECT work_item_id, count(*)::int AS n FROM leases WHERE work_item_id = 'the-one' OR work_item_id LIKE 'more-%' GROUP BY 1");
    expect(rows).toHaveLength(50);
    expect(rows.every((row: { n: number }) => row.n === 1)).toBe(true);
    expect(hubA.waitingClaims + hubB.waitingClaims).toBe(0);
  }, 90_000);
});

describe("no connection while waiting", () => {
  it("250 waiting claims on an instance with a pool of 5: connections stay flat, nothing waits in a transaction, other calls answer", async ({ database, sql, people, instanceB, serverB }) => {
    expect(await readyCount(sql)).toBe(0);
    const hubB = instanceB.wakeups;
    const operatorB = serverB.client((await callerAs(database.instance, "operator")).token);
    const connections = async () =>
      (await sql.query<{ total: number; busy: number; locks: number }>(
        `SELECT count(*)::int AS total,
                count(*) FILTER (WHERE state <> 'idle')::int - 1 AS busy,
                (SELECT count(*)::int FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
                  WHERE s.datname = $1 AND s.pid <> pg_backend_pid() AND l.locktype IN ('relation', 'tuple', 'transactionid')) AS locks
           FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`,
        [database.name],
      )).rows[0]!;
    await operatorB.workItems.list.query({});
    const before = await connections();

    const agents = await Promise.all(Array.from({ length: 250 }, async (_, i) => (await callerAs(instanceB, "agent", `idle-${i}`)).api));
    const waits = agents.map((api) => api.leases.claim({ waitSeconds: 45, durationSeconds: 300 }));
    await expect.poll(() => hubB.waitingClaims, { message: "250 waiting claims", timeout: 30_000 }).toBe(250);
    await expect.poll(async () => (await connections()).busy, { message: "no query running while they wait" }).toBe(0);

    const during = await connections();
    expect(during.total).toBeLessThanOrEqual(before.total + 5); // at most B's pool filled up; not one per waiter
    expect(during.locks).toBe(0);
    // Another call on B answers while all 250 still wait (their 45 s are far from up): they hold none of B's 5 connections.
    expect(await operatorB.workItems.list.query({ limit: 1 })).toMatchObject({ items: expect.any(Array) });
    expect(hubB.waitingClaims).toBe(250);

    await Promise.all(Array.from({ length: 250 }, (_, i) => people.operator.workItems.create({ id: `idle-item-${i}`, title: "Idle item" })));
    const results = await Promise.all(waits);
    expect(new Set(results.map((result) => result?.workItem.id)).size).toBe(250);
  }, 120_000);
});

describe("attention.wait", () => {
  it("returns once the resolution commits on another instance, before its time is up; the current state when the time is up", async ({ database, people, other, instanceB, serverB }) => {
    await people.operator.workItems.create({ id: "question", title: "Question" });
    const held = (await other.leases.claim({ workItemId: "question" }))!.lease;
    const { request } = await other.attention.request({ leaseId: held.id, epoch: held.epoch, kind: "scope", question: "How far?" });
    const asker = serverB.client((await callerAs(database.instance, "agent", "other-worker")).token);

    const started = performance.now();
    const open = await asker.attention.wait.query({ id: request.id, timeoutSeconds: 1 });
    expect(open).toMatchObject({ id: request.id, status: "open" });
    expect(performance.now() - started, "waited its 1 s").toBeGreaterThanOrEqual(950);

    // Time up, a wait also returns the current state, so only the order tells a woken wait:
    // it returns the resolution before its 30 s are up (and the wait is parked before the resolution).
    const timeoutSeconds = 30;
    const waitStarted = performance.now();
    let answeredAfterMs = Infinity;
    const waiting = asker.attention.wait.query({ id: request.id, timeoutSeconds }).then((answer) => {
      answeredAfterMs = performance.now() - waitStarted;
      return answer;
    });
    await expect.poll(() => instanceB.wakeups.waitingForAttention, { message: "the wait to park" }).toBe(1);
    await people.operator.attention.resolve({ id: request.id, resolution: "this far" });
    expect(await waiting).toMatchObject({ id: request.id, status: "resolved", resolution: "this far" });
    expect(answeredAfterMs).toBeLessThan(timeoutSeconds * 1000);

    // Already resolved: at once. Unknown id: NOT_FOUND. Bad timeout: VALIDATION.
    expect(await asker.attention.wait.query({ id: request.id })).toMatchObject({ status: "resolved" });
    await expect(asker.attention.wait.query({ id: "00000000-0000-4000-8000-000000000000" })).rejects.toMatchObject({ data: { reason: "NOT_FOUND" } });
    await expect(asker.attention.wait.query({ id: request.id, timeoutSeconds: 61 })).rejects.toMatchObject({ data: { reason: "VALIDATION" } });
    const next = (await other.leases.claim({ workItemId: "question" }))!.lease;
    await other.leases.release({ leaseId: next.id, epoch: next.epoch, evidence: "done" });
  }, 60_000);
});
