import type pg from "pg";
import { describe, expect } from "vitest";
import { createToken } from "../../server/auth/tokens";
import { startTestServer } from "../support/app";
import { databaseTest, lockWaiters } from "../support/fixtures";
import { insertReadyItems } from "../support/factories";
import { testInstance } from "../support/database";

const it = databaseTest({ poolSize: 40 });

/** Backends currently connected to the test database under `applicationName`. */
async function connectionsNamed(monitor: pg.Client, applicationName: string) {
  const { rows } = await monitor.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
    [applicationName],
  );
  return rows[0]!.n;
}

describe("claims under real concurrency", () => {
  it("50 concurrent claims over HTTP on one ready item: exactly one lease, epoch 1, the others get null", async ({ database, sql: monitor, people }) => {
    // A separate app instance (own pool, tagged connections) so we can see how many connections the race used.
    const app = testInstance(`${database.url}?application_name=claim-race`, { poolSize: 60 });
    const server = await startTestServer(app);
    try {
      const { operator } = people;
      await operator.workItems.create({ id: "only-one", title: "The only ready item" });
      const clients = [];
      for (let i = 0; i < 50; i++) {
        const { token } = await createToken(database.db, { role: "agent", workerId: `racer-${i}` });
        clients.push(server.client(token));
      }
      // Start gate: while a raw connection holds the token table, every request blocks in
      // authentication on its own pool connection; once all 50 wait, the gate opens and the
      // 50 claims run at the same moment on 50 separate connections.
      const gate = await database.connect();
      await gate.query("BEGIN");
      await gate.query("LOCK TABLE api_tokens IN ACCESS EXCLUSIVE MODE");
      // An hour: a shorter lease could expire while the next test runs and be taken by its claims.
      const pending = Promise.all(clients.map((client) => client.leases.claim.mutate({ durationSeconds: 3600 })));
      try {
        await expect.poll(() => lockWaiters(monitor, { applicationName: "claim-race" }), { timeout: 30_000 }).toBe(50);
      } finally {
        await gate.query("ROLLBACK");
      }
      const results = await pending;

      const winners = results.filter((result) => result !== null);
      expect(winners).toHaveLength(1);
      expect(results.filter((result) => result === null)).toHaveLength(49);
      const winner = winners[0]!;
      expect(winner.lease.epoch).toBe(1);
      expect(winner.workItem.id).toBe("only-one");
      const history = await operator.leases.history({ workItemId: "only-one" });
      expect(history).toHaveLength(1);
      expect(history[0]).toMatchObject({ id: winner.lease.id, epoch: 1, workerId: winner.lease.workerId, endedAt: null, outcome: null });
      const claimedEvents = (await operator.events.list({ workItemId: "only-one" })).items.filter((e) => e.type === "lease.claimed");
      expect(claimedEvents).toHaveLength(1);
      expect(await connectionsNamed(monitor, "claim-race")).toBeGreaterThanOrEqual(50);
    } finally {
      await server.close();
      await app.close();
    }
  });

  it("20 workers drain 2,000 items with claim → release: each released exactly once, no lease lost, every worker got work", async ({ database, people }) => {
    const client = await database.connect();
    const { agent } = people;
    await insertReadyItems(client, "drain", 2000, -10);
    const perWorker = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const workerId = `drainer-${i}`;
        const api = await agent(workerId);
        for (;;) {
          const claimed = await api.leases.claim({ durationSeconds: 300 });
          if (!claimed) return;
          expect(claimed.lease.epoch).toBe(1);
          const released = await api.leases.release({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, evidence: `done by ${workerId}` });
          expect(released.lease.outcome).toBe("released");
          perWorker.set(workerId, (perWorker.get(workerId) ?? 0) + 1);
        }
      }),
    );
    const { rows } = await client.query(`
      SELECT count(*)::int AS items,
             count(*) FILTER (WHERE w.status = 'released')::int AS released,
             count(*) FILTER (WHERE w.last_epoch = 1 AND w.current_lease_id IS NULL)::int AS one_epoch,
             (SELECT count(*)::int FROM leases l WHERE l.work_item_id LIKE 'drain-%') AS leases,
             (SELECT count(*)::int FROM leases l WHERE l.work_item_id LIKE 'drain-%' AND l.outcome = 'released' AND l.epoch = 1) AS released_leases,
             (SELECT count(DISTINCT l.work_item_id)::int FROM leases l WHERE l.work_item_id LIKE 'drain-%') AS leased_items,
             (SELECT count(*)::int FROM events e WHERE e.work_item_id LIKE 'drain-%' AND e.type = 'lease.claimed') AS claimed_events
        FROM work_items w WHERE w.id LIKE 'drain-%'`);
    expect(rows[0]).toEqual({
      items: 2000, released: 2000, one_epoch: 2000, leases: 2000, released_leases: 2000, leased_items: 2000, claimed_events: 2000,
    });
    expect([...perWorker.values()].reduce((a, b) => a + b, 0)).toBe(2000);
    expect(perWorker.size).toBe(20);
    for (const count of perWorker.values()) expect(count).toBeGreaterThan(0);
  });

  it("a next-claim skips a row another connection holds FOR UPDATE, without waiting for it", async ({ database, people }) => {
    const { operator, agent } = people;
    const skipper = await agent("skipper");
    await operator.workItems.create({ id: "held-top", title: "Top, but locked", priority: 1000 });
    await operator.workItems.create({ id: "held-second", title: "Second", priority: 999 });
    await skipper.workItems.queue({ limit: 1 }); // warm a pool connection: we time the claim, not a connect
    const holder = await database.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT id FROM work_items WHERE id = 'held-top' FOR UPDATE");
    try {
      // The holder keeps its lock until this claim has returned: had the claim waited for the
      // row, it would never return.
      const claimed = await skipper.leases.claim({ durationSeconds: 60 });
      expect(claimed?.workItem.id).toBe("held-second");
    } finally {
      await holder.query("ROLLBACK");
    }
    // The skipped item was not touched and is still first for the next claimer.
    expect((await operator.workItems.get({ id: "held-top" })).stage).toBe("ready");
    expect((await (await agent("after")).leases.claim({ durationSeconds: 60 }))?.workItem.id).toBe("held-top");
  });
});
