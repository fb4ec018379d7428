import type pg from "pg";
import { describe, expect } from "vitest";
import type { Instance } from "../../server/instance";
import { callerAs, type TestClient } from "../support/app";
import { twoInstanceTest } from "../support/fixtures";
import { setPolicy } from "./support";

/*
 * Rule 15's wake-up and rule 14's: a claim waiting on instance B is woken when an item it could
 * take passes its notBefore (no commit happens: B's own timer for the soonest gate), when a
 * lease on a full key ends, and when a limit is raised or deleted (made on instance A).
 */

const it = twoInstanceTest()
  .extend("holder", { scope: "file" }, ({ people }) => people.agent("holder"))
  .extend("waiterB", { scope: "file" }, async ({ database, serverB }) => serverB.client((await callerAs(database.instance, "agent", "waiter-b")).token))
  .extend("waiterA", { scope: "file" }, async ({ database, server }) => server.client((await callerAs(database.instance, "agent", "waiter-a")).token));

const databaseNow = async (sql: pg.Client) => (await sql.query<{ now: Date }>("SELECT work_graph_clock() AS now")).rows[0]!.now.getTime();

/** Starts a waiting claim on `client`'s instance; once it is parked there, `{ claim }` (wrapped, so awaiting this does not await the claim). */
async function parkedClaim(instance: Instance, client: TestClient, input: { capabilities?: string[] } = {}) {
  const hub = instance.wakeups;
  const before = hub.waitingClaims;
  const claim = client.leases.claim.mutate({ waitSeconds: 30, durationSeconds: 600, ...input });
  let early: unknown = "pending";
  claim.then((value) => (early = value), (error: unknown) => (early = error));
  await expect.poll(() => (early === "pending" ? hub.waitingClaims : early), { message: "the claim to wait" }).toBe(before + 1);
  return { claim };
}

const openLeases = async (sql: pg.Client) => {
  await sql.query("UPDATE leases SET ended_at = work_graph_clock(), outcome = 'revoked' WHERE ended_at IS NULL");
  await sql.query("UPDATE work_items SET status = 'cancelled', current_lease_id = NULL, lease_expires_at = NULL WHERE status = 'open'");
};

describe("waiting claims wake for time gates and freed keys, across two instances", () => {
  it("a waiting claim takes a gated item within 1 s after its notBefore (database clock), with no commit, on each instance", async ({ people, sql, database, instanceB, waiterA, waiterB }) => {
    await openLeases(sql);
    await people.operator.workItems.create({ id: "gate-1", title: "Gate 1" });
    await people.operator.workItems.create({ id: "gate-2", title: "Gate 2" });
    await setPolicy(sql, ["gate-1"], { notBeforeInSeconds: 4 });
    await setPolicy(sql, ["gate-2"], { notBeforeInSeconds: 5 });
    const lastEvent = Number((await sql.query("SELECT max(sequence) AS s FROM events")).rows[0].s);
    const onB = (await parkedClaim(instanceB, waiterB)).claim;
    const onA = (await parkedClaim(database.instance, waiterA)).claim;
    const [fromB, fromA] = await Promise.all([onB, onA]);
    const { rows } = await sql.query<{ id: string; notBefore: Date }>(`SELECT id, not_before AS "notBefore" FROM work_items WHERE id IN ('gate-1', 'gate-2') ORDER BY id`);
    const gates = new Map(rows.map((row) => [row.id, row.notBefore.getTime()]));
    for (const result of [fromA, fromB]) {
      expect(result).not.toBeNull();
      const lag = Date.parse(result!.lease.acquiredAt) - gates.get(result!.workItem.id)!;
      expect(lag).toBeGreaterThanOrEqual(0);
      expect(lag).toBeLessThan(1000);
    }
    expect(new Set([fromA!.workItem.id, fromB!.workItem.id])).toEqual(new Set(["gate-1", "gate-2"]));
    // Nothing but the two claims was written while they waited.
    const written = await sql.query("SELECT type FROM events WHERE sequence > $1", [lastEvent]);
    expect(written.rows.map((row) => row.type)).toEqual(["lease.claimed", "lease.claimed"]);
  });

  it("a gate the waiter could not take does not cut its wait short, and its own gate still wakes it", async ({ people, sql, instanceB, waiterB }) => {
    await openLeases(sql);
    await people.operator.workItems.create({ id: "gpu-soon", title: "needs a gpu" });
    await people.operator.workItems.create({ id: "plain-later", title: "plain" });
    await setPolicy(sql, ["gpu-soon"], { requires: ["gpu"], notBeforeInSeconds: 1 });
    await setPolicy(sql, ["plain-later"], { notBeforeInSeconds: 2 });
    const result = await (await parkedClaim(instanceB, waiterB)).claim;
    expect(result?.workItem.id).toBe("plain-later");
    const gate = (await sql.query<{ at: Date }>("SELECT not_before AS at FROM work_items WHERE id = 'plain-later'")).rows[0]!.at.getTime();
    expect(Date.parse(result!.lease.acquiredAt) - gate).toBeLessThan(1000);
  });

  it("a lease on a full key ending wakes a claim waiting on another instance", async ({ people, sql, instanceB, holder, waiterB }) => {
    await openLeases(sql);
    await people.operator.workItems.create({ id: "key-a", title: "A", priority: 2 });
    await people.operator.workItems.create({ id: "key-b", title: "B", priority: 1 });
    await setPolicy(sql, ["key-a", "key-b"], { concurrencyKey: "one-at-a-time" });
    await people.operator.limits.set({ key: "one-at-a-time", maxLeases: 1 });
    const held = (await holder.leases.claim({}))!;
    expect(held.workItem.id).toBe("key-a");
    const waiting = (await parkedClaim(instanceB, waiterB)).claim;
    const started = await databaseNow(sql);
    await holder.leases.release({ leaseId: held.lease.id, epoch: held.lease.epoch, evidence: "done" });
    const result = await waiting;
    expect(result?.workItem.id).toBe("key-b");
    expect(Date.parse(result!.lease.acquiredAt)).toBeGreaterThan(started);
    await people.operator.limits.delete({ key: "one-at-a-time" });
  });

  for (const change of ["raised", "deleted"] as const) {
    it(`a limit ${change} on instance A wakes a claim waiting on instance B`, async ({ people, sql, instanceB, waiterB }) => {
      await openLeases(sql);
      await people.operator.workItems.create({ id: `paused-${change}`, title: "Paused" });
      await setPolicy(sql, [`paused-${change}`], { concurrencyKey: `paused-${change}` });
      await people.operator.limits.set({ key: `paused-${change}`, maxLeases: 0 });
      const waiting = (await parkedClaim(instanceB, waiterB)).claim;
      if (change === "raised") await people.operator.limits.set({ key: `paused-${change}`, maxLeases: 1 });
      else await people.operator.limits.delete({ key: `paused-${change}` });
      expect((await waiting)?.workItem.id).toBe(`paused-${change}`);
    });
  }
});
