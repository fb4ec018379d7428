import type pg from "pg";
import { describe, expect } from "vitest";
import { createToken } from "../../server/auth/tokens";
import { transactionRetries } from "../../server/database/transaction";
import { startTestServer, type TestClient } from "../support/app";
import { databaseTest } from "../support/fixtures";
import { insertReadyItems } from "../support/factories";
import { setPolicy } from "./support";
import { testInstance } from "../support/database";

const it = databaseTest({ poolSize: 20, scope: "test" });

/**
 * The most leases on `key` that were ever live at one instant, from the lease history: each
 * lease is live from acquired_at until it ended or expired, whichever came first.
 */
async function maxSimultaneouslyLive(sql: pg.Client, key: string): Promise<number> {
  const { rows } = await sql.query<{ at: Date; delta: number }>(
    `SELECT at, delta FROM (
       SELECT acquired_at AS at, 1 AS delta FROM leases WHERE concurrency_key = $1
       UNION ALL
       SELECT LEAST(coalesce(ended_at, 'infinity'), expires_at), -1 FROM leases WHERE concurrency_key = $1
     ) x ORDER BY at, delta`,
    [key],
  );
  let live = 0;
  let most = 0;
  for (const { delta } of rows) most = Math.max(most, (live += delta));
  return most;
}

const deadlocks = () => transactionRetries()["40P01"] ?? 0;

describe("concurrency limits are never exceeded (rule 14), proven under races", () => {
  it("limit 3, 50 concurrent next claims from 50 connections, 20 rounds: never more than 3 live leases on the key", { timeout: 180_000 }, async ({ database, sql, people }) => {
    const app = testInstance(`${database.url}?application_name=limit-race`, { poolSize: 60 });
    const server = await startTestServer(app);
    try {
      await insertReadyItems(sql, "keyed", 120, 5);
      await insertReadyItems(sql, "plain", 1000, 1);
      await setPolicy(sql, Array.from({ length: 120 }, (_, i) => `keyed-${String(i + 1).padStart(5, "0")}`), { concurrencyKey: "staging-db" });
      await people.operator.limits.set({ key: "staging-db", maxLeases: 3 });
      const workers: { id: string; client: TestClient }[] = [];
      for (let i = 0; i < 50; i++) {
        const { token } = await createToken(database.db, { role: "agent", workerId: `racer-${i}` });
        workers.push({ id: `racer-${i}`, client: server.client(token) });
      }
      const deadlocksBefore = deadlocks();
      let held: { client: TestClient; leaseId: string; epoch: number }[] = [];
      let keyedClaims = 0;
      for (let round = 0; round < 20; round++) {
        // The previous round's keyed leases are released while this round's claims race for them.
        const releases = held.map(({ client, leaseId, epoch }) => client.leases.release.mutate({ leaseId, epoch, evidence: "done" }));
        const claims = await Promise.all(workers.map(({ client }) => client.leases.claim.mutate({ durationSeconds: 3600 })));
        await Promise.all(releases);
        held = [];
        for (const [index, claimed] of claims.entries()) {
          expect(claimed).not.toBeNull();
          if (claimed!.workItem.concurrencyKey === "staging-db") {
            held.push({ client: workers[index]!.client, leaseId: claimed!.lease.id, epoch: claimed!.lease.epoch });
          }
        }
        keyedClaims += held.length;
        const { rows } = await sql.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM leases WHERE concurrency_key = 'staging-db' AND ended_at IS NULL AND expires_at > work_graph_clock()",
        );
        expect(rows[0]!.n).toBeLessThanOrEqual(3);
        // Everything unkeyed goes back so the next round races on the same mix.
        await sql.query("UPDATE leases SET expires_at = work_graph_clock() WHERE ended_at IS NULL AND concurrency_key IS NULL");
        await sql.query(
          "UPDATE leases SET ended_at = expires_at, outcome = 'expired' WHERE ended_at IS NULL AND concurrency_key IS NULL",
        );
        await sql.query("UPDATE work_items SET current_lease_id = NULL, lease_expires_at = NULL WHERE concurrency_key IS NULL AND lease_expires_at IS NOT NULL");
      }
      expect(await maxSimultaneouslyLive(sql, "staging-db")).toBe(3);
      // Keyed items stay at the head of the queue: the key was filled in most rounds, not starved.
      expect(keyedClaims).toBeGreaterThanOrEqual(40);
      expect(deadlocks()).toBe(deadlocksBefore);
    } finally {
      await server.close();
      await app.close();
    }
  });

  it("named claims, next claims and limits.set race on one key: the limit holds, LIMIT_REACHED names it, no deadlock", { timeout: 60_000 }, async ({ database, sql, people }) => {
    const app = testInstance(`${database.url}?application_name=named-race`, { poolSize: 40 });
    const server = await startTestServer(app);
    try {
      await insertReadyItems(sql, "ci", 30);
      const ids = Array.from({ length: 30 }, (_, i) => `ci-${String(i + 1).padStart(5, "0")}`);
      await setPolicy(sql, ids, { concurrencyKey: "repo:ci" });
      await people.operator.limits.set({ key: "repo:ci", maxLeases: 2 });
      const clients: TestClient[] = [];
      for (let i = 0; i < 30; i++) clients.push(server.client((await createToken(database.db, { role: "agent", workerId: `n-${i}` })).token));
      const deadlocksBefore = deadlocks();

      const named = clients.slice(0, 15).map((client, i) =>
        client.leases.claim.mutate({ workItemId: ids[i]!, durationSeconds: 3600 }).then(
          (claimed) => ({ claimed, reason: undefined as string | undefined, error: undefined as unknown }),
          (error: { data?: { reason?: string; detail?: Record<string, unknown> } }) => ({ claimed: null, reason: error.data?.reason, error }),
        ),
      );
      const next = clients.slice(15).map((client) => client.leases.claim.mutate({ durationSeconds: 3600 }));
      const operatorClient = server.client((await createToken(database.db, { role: "operator" })).token);
      const setting = [2, 1, 2, 2].map((maxLeases) => operatorClient.limits.set.mutate({ key: "repo:ci", maxLeases }));
      const namedResults = await Promise.all(named);
      const nextResults = await Promise.all(next);
      await Promise.all(setting);

      const leased = namedResults.filter((r) => r.claimed !== null).length + nextResults.filter((r) => r !== null).length;
      expect(leased).toBeGreaterThanOrEqual(1);
      expect(leased).toBeLessThanOrEqual(2);
      for (const refused of namedResults.filter((r) => r.claimed === null)) {
        expect(refused.reason).toBe("LIMIT_REACHED");
        expect((refused.error as { data: { detail: unknown } }).data.detail).toMatchObject({ key: "repo:ci", maxLeases: expect.any(Number), liveLeases: expect.any(Number) });
      }
      expect(await maxSimultaneouslyLive(sql, "repo:ci")).toBeLessThanOrEqual(2);
      expect(deadlocks()).toBe(deadlocksBefore);
    } finally {
      await server.close();
      await app.close();
    }
  });
});
