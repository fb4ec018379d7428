import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../server/db";
import { startExpirySweeper } from "../../server/operations/sweep";
import { actors } from "../support/fixtures";
import { createTestDatabase, type TestDatabase } from "../support/database";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

describe("expiry sweep", () => {
  it("ends expired leases nobody reclaims within 5 s; two app instances end each exactly once", async () => {
    const { operator, agent } = await actors(database);
    const a = await agent("sleepy");
    const ids = Array.from({ length: 30 }, (_, i) => `sweep-${i}`);
    for (const id of ids) await operator.workItems.create({ id, title: id });
    const leases = [];
    for (const id of ids) leases.push((await a.leases.claim({ workItemId: id, durationSeconds: 1 }))!.lease);

    const secondInstance = createDb(database.url, { poolSize: 3 });
    const errors: unknown[] = [];
    const sweepers = [
      startExpirySweeper(database.db, 100, (error) => errors.push(error)),
      startExpirySweeper(secondInstance, 100, (error) => errors.push(error)),
    ];
    try {
      const client = await database.connect();
      const deadline = Date.parse(leases.at(-1)!.expiresAt) + 5_000;
      let ended = 0;
      while (Date.now() < deadline + 2_000) {
        const { rows } = await client.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM leases WHERE worker_id = 'sleepy' AND outcome = 'expired'",
        );
        ended = rows[0]!.n;
        if (ended === ids.length) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(ended).toBe(ids.length);
      const { rows: late } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM events e JOIN leases l ON l.id = e.lease_id WHERE e.type = 'lease.ended' AND l.worker_id = 'sleepy' AND e.created_at > l.expires_at + interval '5 seconds'",
      );
      expect(late[0]!.n).toBe(0);
      const { rows: events } = await client.query<{ lease_id: string; n: number }>(
        "SELECT lease_id, count(*)::int AS n FROM events WHERE type = 'lease.ended' AND work_item_id LIKE 'sweep-%' GROUP BY lease_id",
      );
      expect(events).toHaveLength(ids.length);
      expect(events.every((row) => row.n === 1)).toBe(true);
      const history = await operator.leases.history({ workItemId: "sweep-0" });
      expect(history[0]!.endedAt).toBe(history[0]!.expiresAt);
      expect((await operator.workItems.get({ id: "sweep-0" })).stage).toBe("ready");
      expect(errors).toEqual([]);
    } finally {
      await Promise.all(sweepers.map((sweeper) => sweeper.stop()));
      await secondInstance.$disconnect();
    }
  });
});
