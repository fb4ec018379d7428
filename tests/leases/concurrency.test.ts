import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claim } from "../../server/operations/claim";
import { release } from "../../server/operations/finish";
import type { Caller } from "../../server/domain/types";
import { actors, insertReadyItems } from "../support/fixtures";
import { createTestDatabase, type TestDatabase } from "../support/database";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ poolSize: 60 });
});
afterAll(() => database.close());

const agentCaller = (workerId: string): Caller => ({ tokenId: `token-${workerId}`, role: "agent", workerId, actor: workerId });

describe("claims under real concurrency", () => {
  it("50 concurrent claims on one ready item give exactly one lease, epoch 1", async () => {
    const { operator } = await actors(database);
    await operator.workItems.create({ id: "only-one", title: "The only ready item" });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => claim(database.db, agentCaller(`racer-${i}`), `racer-${i}`, { durationSeconds: 60 })),
    );
    const winners = results.filter((result) => result !== null);
    expect(winners).toHaveLength(1);
    expect(winners[0]!.lease.epoch).toBe(1);
    const { rows } = await (await database.connect()).query("SELECT epoch FROM leases WHERE work_item_id = 'only-one'");
    expect(rows).toEqual([{ epoch: 1 }]);
  });

  it("20 workers drain 2,000 items: each released exactly once, every worker got work", async () => {
    const client = await database.connect();
    await insertReadyItems(client, "drain", 2000, -10);
    const perWorker = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const workerId = `drainer-${i}`;
        const caller = agentCaller(workerId);
        for (;;) {
          const claimed = await claim(database.db, caller, workerId, { durationSeconds: 300 });
          if (!claimed) return;
          await release(database.db, caller, { leaseId: claimed.lease.id, epoch: claimed.lease.epoch, evidence: `done by ${workerId}` });
          perWorker.set(workerId, (perWorker.get(workerId) ?? 0) + 1);
        }
      }),
    );
    const { rows } = await client.query(`
      SELECT count(*)::int AS items,
             count(*) FILTER (WHERE w.status = 'released')::int AS released,
             (SELECT count(*)::int FROM leases l WHERE l.work_item_id LIKE 'drain-%') AS leases,
             (SELECT count(*)::int FROM leases l WHERE l.work_item_id LIKE 'drain-%' AND l.outcome = 'released') AS released_leases
        FROM work_items w WHERE w.id LIKE 'drain-%'`);
    expect(rows[0]).toEqual({ items: 2000, released: 2000, leases: 2000, released_leases: 2000 });
    expect([...perWorker.values()].reduce((a, b) => a + b, 0)).toBe(2000);
    expect(perWorker.size).toBe(20);
  });

  it("a next-claim skips a row another connection holds FOR UPDATE, at once", async () => {
    const { operator } = await actors(database);
    await operator.workItems.create({ id: "held-top", title: "Top, but locked", priority: 1000 });
    await operator.workItems.create({ id: "held-second", title: "Second", priority: 999 });
    const holder = await database.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT id FROM work_items WHERE id = 'held-top' FOR UPDATE");
    try {
      const started = performance.now();
      const claimed = await claim(database.db, agentCaller("skipper"), "skipper", { durationSeconds: 60 });
      const elapsed = performance.now() - started;
      expect(claimed?.workItem.id).toBe("held-second");
      expect(elapsed).toBeLessThan(200);
    } finally {
      await holder.query("ROLLBACK");
    }
  });
});
