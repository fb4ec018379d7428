import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../../server/db";
import { stopWakeups, wakeups } from "../../server/realtime/wakeups";
import { callerAs, startTestServer, type TestClient } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { waitUntilDatabaseTime } from "../support/fixtures";

/*
 * API.md "Waiting instead of polling": a waiting claim (or attention.wait) is woken by the
 * commit that made work ready, through PostgreSQL, so two app instances on one database
 * wake each other. Instance A = the test database's client (the causes are made there),
 * instance B = a second client on the same database with its own listener and HTTP server
 * (the waiters wait there). Every wait is gated on B's waiter count, not on a sleep.
 */

let database: TestDatabase;
let sql: pg.Client;
let dbB: Db;
let serverB: Awaited<ReturnType<typeof startTestServer>>;
let operator: Awaited<ReturnType<typeof callerAs>>["api"];
let other: Awaited<ReturnType<typeof callerAs>>["api"];
let waiterB: TestClient;
let operatorB: TestClient;

beforeAll(async () => {
  database = await createTestDatabase();
  sql = await database.connect();
  dbB = createDb(database.url, { poolSize: 5 });
  serverB = await startTestServer(dbB);
  operator = (await callerAs(database.db, "operator")).api;
  other = (await callerAs(database.db, "agent", "other-worker")).api;
  waiterB = serverB.client((await callerAs(database.db, "agent", "waiter")).token);
  operatorB = serverB.client((await callerAs(database.db, "operator")).token);
});
afterAll(async () => {
  await serverB.close();
  await stopWakeups(dbB);
  await dbB.$disconnect();
  await database.close();
});

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const readyCount = async () =>
  Number((await sql.query(`SELECT count(*) FROM work_items WHERE status = 'open' AND open_dependency_count = 0
    AND ancestor_dependency_count = 0 AND open_child_count = 0 AND blocking_attention_count = 0 AND current_lease_id IS NULL`)).rows[0].count);

/** Starts a waiting claim on instance B, waits until it is parked there, runs `cause` on instance A, and times commit → response. */
async function claimWokenBy(cause: () => Promise<unknown>, input: { idempotencyKey?: string } = {}) {
  expect(await readyCount()).toBe(0);
  const hubB = wakeups(dbB);
  const before = hubB.waitingClaims;
  let answeredAt = 0;
  const waiting = waiterB.leases.claim.mutate({ waitSeconds: 30, durationSeconds: 60, ...input }).then((result) => {
    answeredAt = performance.now();
    return result;
  });
  await until(() => hubB.waitingClaims === before + 1, "the claim to wait on instance B");
  await cause();
  const committedAt = performance.now();
  const result = await waiting;
  return { result, latencyMs: answeredAt - committedAt };
}

describe("leases.claim with waitSeconds, across two app instances", () => {
  it("an item created", async () => {
    const { result, latencyMs } = await claimWokenBy(() => operator.workItems.create({ id: "created-later", title: "Created later" }));
    expect(result?.workItem.id).toBe("created-later");
    expect(latencyMs).toBeLessThan(1_000);
  });

  for (const finish of ["release", "cancel"] as const) {
    it(`a blocker ${finish === "release" ? "released" : "cancelled"}`, async () => {
      await operator.workItems.create({ id: `blocker-${finish}`, title: "Blocker" });
      await operator.workItems.create({ id: `dependent-${finish}`, title: "Dependent", dependsOn: [`blocker-${finish}`] });
      const held = (await other.leases.claim({ workItemId: `blocker-${finish}` }))!.lease;
      const { result, latencyMs } = await claimWokenBy(() =>
        finish === "release"
          ? other.leases.release({ leaseId: held.id, epoch: held.epoch, evidence: "done" })
          : other.leases.cancel({ leaseId: held.id, epoch: held.epoch, reason: "not needed" }),
      );
      expect(result?.workItem.id).toBe(`dependent-${finish}`);
      expect(latencyMs).toBeLessThan(1_000);
    });
  }

  it("an attention request resolved", async () => {
    await operator.workItems.create({ id: "asked", title: "Asked" });
    const held = (await other.leases.claim({ workItemId: "asked" }))!.lease;
    const { request } = await other.attention.request({ leaseId: held.id, epoch: held.epoch, kind: "decision", question: "Which way?" });
    const { result, latencyMs } = await claimWokenBy(() => operator.attention.resolve({ id: request.id, resolution: "left" }));
    expect(result?.workItem.id).toBe("asked");
    expect(latencyMs).toBeLessThan(1_000);
  });

  it("a child finishing (the parent is ready again)", async () => {
    await operator.workItems.create({ id: "parent", title: "Parent" });
    await operator.workItems.create({ id: "only-child", title: "Child", parentId: "parent" });
    const held = (await other.leases.claim({ workItemId: "only-child" }))!.lease;
    const { result, latencyMs } = await claimWokenBy(() => other.leases.release({ leaseId: held.id, epoch: held.epoch, evidence: "done" }));
    expect(result?.workItem.id).toBe("parent");
    expect(latencyMs).toBeLessThan(1_000);
  });

  it("a decomposition (its children are ready)", async () => {
    await operator.workItems.create({ id: "big", title: "Big" });
    const held = (await other.leases.claim({ workItemId: "big" }))!.lease;
    const { result, latencyMs } = await claimWokenBy(() =>
      other.leases.decompose({ leaseId: held.id, epoch: held.epoch, children: [{ id: "small", title: "Small" }] }),
    );
    expect(result?.workItem.id).toBe("small");
    expect(latencyMs).toBeLessThan(1_000);
    const small = result!.lease;
    await waiterB.leases.release.mutate({ leaseId: small.id, epoch: small.epoch, evidence: "done" });
    const parent = (await other.leases.claim({ workItemId: "big" }))!.lease; // keep "big" out of the next tests
    await other.leases.release({ leaseId: parent.id, epoch: parent.epoch, evidence: "done" });
  });

  it("a lease revoked by an operator (the item is ready again)", async () => {
    await operator.workItems.create({ id: "taken-back", title: "Taken back" });
    const held = (await other.leases.claim({ workItemId: "taken-back" }))!.lease;
    const { result, latencyMs } = await claimWokenBy(() => operator.leases.revoke({ leaseId: held.id, epoch: held.epoch, reason: "reassigning" }));
    expect(result?.workItem.id).toBe("taken-back");
    expect(result?.lease.epoch).toBe(2);
    expect(latencyMs).toBeLessThan(1_000);
    await waiterB.leases.release.mutate({ leaseId: result!.lease.id, epoch: result!.lease.epoch, evidence: "done" });
  });

  it("a dependency removed", async () => {
    await operator.workItems.create({ id: "gate", title: "Gate" });
    await operator.workItems.create({ id: "gated", title: "Gated", dependsOn: ["gate"] });
    const gate = (await other.leases.claim({ workItemId: "gate" }))!.lease;
    const { result, latencyMs } = await claimWokenBy(() => operator.workItems.removeDependency({ workItemId: "gated", dependsOnId: "gate" }));
    expect(result?.workItem.id).toBe("gated");
    expect(latencyMs).toBeLessThan(1_000);
    await other.leases.release({ leaseId: gate.id, epoch: gate.epoch, evidence: "done" });
  });

  it("a lease expiring (no transaction makes it ready): claimed within 1 s of its expiresAt", async () => {
    await operator.workItems.create({ id: "abandoned", title: "Abandoned" });
    const held = (await other.leases.claim({ workItemId: "abandoned", durationSeconds: 2 }))!.lease;
    const { result } = await claimWokenBy(() => waitUntilDatabaseTime(sql, held.expiresAt));
    expect(result?.workItem.id).toBe("abandoned");
    expect(result?.lease.epoch).toBe(2);
    // Both times are the database clock: expiry → new lease.
    expect(Date.parse(result!.lease.acquiredAt) - Date.parse(held.expiresAt)).toBeLessThan(1_000);
  });

  it("a named claim waits for that item and claims it once it is ready", async () => {
    await operator.workItems.create({ id: "named-gate", title: "Gate" });
    await operator.workItems.create({ id: "named-target", title: "Target", dependsOn: ["named-gate"] });
    const gate = (await other.leases.claim({ workItemId: "named-gate" }))!.lease;
    const hubB = wakeups(dbB);
    const waiting = waiterB.leases.claim.mutate({ workItemId: "named-target", waitSeconds: 30 });
    await until(() => hubB.waitingClaims === 1, "the named claim to wait");
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
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it("returns null when the time is up, not before; waitSeconds is validated", async () => {
    expect(await readyCount()).toBe(0);
    const started = performance.now();
    expect(await waiterB.leases.claim.mutate({ waitSeconds: 0.5 })).toBeNull();
    expect(performance.now() - started).toBeGreaterThanOrEqual(450);
    expect(wakeups(dbB).waitingClaims).toBe(0);
    for (const waitSeconds of [-1, 61, "5"]) {
      await expect(waiterB.leases.claim.mutate({ waitSeconds } as never)).rejects.toMatchObject({ data: { reason: "VALIDATION" } });
    }
  });

  it("an idempotency key: a wait that found nothing stores nothing, so the same key claims later and replays that", async () => {
    expect(await waiterB.leases.claim.mutate({ waitSeconds: 0.2, idempotencyKey: "wait-key" })).toBeNull();
    const { result } = await claimWokenBy(() => operator.workItems.create({ id: "keyed", title: "Keyed" }), { idempotencyKey: "wait-key" });
    expect(result?.workItem.id).toBe("keyed");
    const replay = await waiterB.leases.claim.mutate({ waitSeconds: 30, durationSeconds: 60, idempotencyKey: "wait-key" });
    expect(replay?.lease.id).toBe(result!.lease.id);
  });
});

describe("fairness", () => {
  it("50 claims waiting on two instances, one item: one lease, the other 49 keep waiting, then each gets one of 49 more", async () => {
    expect(await readyCount()).toBe(0);
    const hubA = wakeups(database.db);
    const hubB = wakeups(dbB);
    const agents = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => (await callerAs(i % 2 === 0 ? database.db : dbB, "agent", `fair-${i}`)).api),
    );
    const settled: (string | null)[] = [];
    const waits = agents.map((api) =>
      api.leases.claim({ waitSeconds: 45, durationSeconds: 300 }).then((result) => {
        settled.push(result ? result.workItem.id : null);
        return result;
      }),
    );
    await until(() => hubA.waitingClaims + hubB.waitingClaims === 50, "50 waiting claims");

    await operator.workItems.create({ id: "the-one", title: "The one" });
    await until(() => settled.length === 1, "one claim to get the item");
    // Every instance has heard the commit and tried: give the losers' dispatch rounds time to finish, gated on state.
    await until(async () => (await sql.query("SELECT count(*) FROM leases WHERE work_item_id = 'the-one'")).rows[0].count === "1", "the lease row");
    expect(settled).toEqual(["the-one"]);
    expect(hubA.waitingClaims + hubB.waitingClaims).toBe(49);

    for (let i = 0; i < 49; i++) await operator.workItems.create({ id: `more-${i}`, title: "More" });
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
  it("250 waiting claims on an instance with a pool of 5: connections stay flat, nothing waits in a transaction, other calls answer", async () => {
    expect(await readyCount()).toBe(0);
    const hubB = wakeups(dbB);
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

    const agents = await Promise.all(Array.from({ length: 250 }, async (_, i) => (await callerAs(dbB, "agent", `idle-${i}`)).api));
    const waits = agents.map((api) => api.leases.claim({ waitSeconds: 45, durationSeconds: 300 }));
    await until(() => hubB.waitingClaims === 250, "250 waiting claims");
    await until(async () => (await connections()).busy === 0, "no query running while they wait");

    const during = await connections();
    expect(during.total).toBeLessThanOrEqual(before.total + 5); // at most B's pool filled up; not one per waiter
    expect(during.locks).toBe(0);
    const started = performance.now();
    expect(await operatorB.workItems.list.query({ limit: 1 })).toMatchObject({ items: expect.any(Array) });
    expect(performance.now() - started).toBeLessThan(2_000);

    await Promise.all(Array.from({ length: 250 }, (_, i) => operator.workItems.create({ id: `idle-item-${i}`, title: "Idle item" })));
    const results = await Promise.all(waits);
    expect(new Set(results.map((result) => result?.workItem.id)).size).toBe(250);
  }, 120_000);
});

describe("attention.wait", () => {
  it("returns within 1 s of the resolution committing on another instance; the current state when the time is up", async () => {
    await operator.workItems.create({ id: "question", title: "Question" });
    const held = (await other.leases.claim({ workItemId: "question" }))!.lease;
    const { request } = await other.attention.request({ leaseId: held.id, epoch: held.epoch, kind: "scope", question: "How far?" });
    const asker = serverB.client((await callerAs(database.db, "agent", "other-worker")).token);

    const started = performance.now();
    const open = await asker.attention.wait.query({ id: request.id, timeoutSeconds: 1 });
    expect(open).toMatchObject({ id: request.id, status: "open" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);

    let answeredAt = 0;
    const waiting = asker.attention.wait.query({ id: request.id, timeoutSeconds: 30 }).then((answer) => {
      answeredAt = performance.now();
      return answer;
    });
    await until(() => wakeups(dbB).waitingForAttention === 1, "the wait to park");
    await operator.attention.resolve({ id: request.id, resolution: "this far" });
    const resolvedAt = performance.now();
    expect(await waiting).toMatchObject({ id: request.id, status: "resolved", resolution: "this far" });
    expect(answeredAt - resolvedAt).toBeLessThan(1_000);

    // Already resolved: at once. Unknown id: NOT_FOUND. Bad timeout: VALIDATION.
    expect(await asker.attention.wait.query({ id: request.id })).toMatchObject({ status: "resolved" });
    await expect(asker.attention.wait.query({ id: "00000000-0000-4000-8000-000000000000" })).rejects.toMatchObject({ data: { reason: "NOT_FOUND" } });
    await expect(asker.attention.wait.query({ id: request.id, timeoutSeconds: 61 })).rejects.toMatchObject({ data: { reason: "VALIDATION" } });
    const next = (await other.leases.claim({ workItemId: "question" }))!.lease;
    await other.leases.release({ leaseId: next.id, epoch: next.epoch, evidence: "done" });
  }, 60_000);
});
