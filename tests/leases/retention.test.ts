import type pg from "pg";
import { describe, expect } from "vitest";
import { Prisma } from "../../server/generated/prisma/client";
import { MAX_NAMED_STATEMENTS } from "../../server/db";
import { sweepExpiredReceipts } from "../../server/operations/sweep";
import { advanceClock, databaseTest } from "../support/fixtures";
import { insertIdempotencyReceipts } from "../support/factories";
import { testInstance } from "../support/database";

/*
 * Nothing the service keeps grows with the number of calls: idempotency receipts expire after
 * WORK_GRAPH_IDEMPOTENCY_HOURS and an empty claim leaves none; each connection's prepared
 * statements stay bounded whatever SQL texts the calls produce.
 */

const it = databaseTest({ poolSize: 8 });

const receipts = async (sql: pg.Client) => Number((await sql.query<{ n: string }>("SELECT count(*) AS n FROM idempotency_receipts")).rows[0]!.n);

async function inParallel(total: number, lanes: number, call: (i: number) => Promise<unknown>) {
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < total) await call(next++);
  }));
}

describe("idempotency receipts", () => {
  it("10,000 keyed claims that find nothing leave no receipt", async ({ people, sql }) => {
    const { agent } = people;
    const poller = await agent("empty-poller");
    await inParallel(10_000, 8, async (i) => expect(await poller.leases.claim({ durationSeconds: 60, idempotencyKey: `poll-${i}` })).toBeNull());
    expect(await receipts(sql)).toBe(0);
  }, 600_000);

  it("expire after WORK_GRAPH_IDEMPOTENCY_HOURS: the sweeper deletes them in batches and a later replay is a new call", async ({ database, sql, people }) => {
    const { operator, agent } = people;
    const worker = await agent("retention");
    await operator.workItems.create({ id: "keep-1", title: "One" });
    await operator.workItems.create({ id: "keep-2", title: "Two" });
    const first = (await worker.leases.claim({ durationSeconds: 60, idempotencyKey: "old-key" }))!;
    await worker.leases.release({ leaseId: first.lease.id, epoch: 1, evidence: "done" });
    expect(await worker.leases.claim({ durationSeconds: 60, idempotencyKey: "old-key" })).toEqual(first);
    // 2,500 receipts from 25 hours ago (default retention 24 h) and one fresh.
    await insertIdempotencyReceipts(sql, "worker:someone", 2500);
    await advanceClock(sql, 25 * 3600);
    await worker.leases.claim({ durationSeconds: 60, idempotencyKey: "fresh-key" });
    expect(await receipts(sql)).toBe(2502);

    expect(await sweepExpiredReceipts(database.db, 1000)).toBe(1000);
    expect(await sweepExpiredReceipts(database.db, 1000)).toBe(1000);
    expect(await sweepExpiredReceipts(database.db, 1000)).toBe(501);
    expect(await sweepExpiredReceipts(database.db, 1000)).toBe(0);
    expect((await sql.query("SELECT key FROM idempotency_receipts")).rows).toEqual([{ key: "fresh-key" }]);

    // Expired but not yet swept: the replay is a new call too.
    await operator.workItems.create({ id: "keep-3", title: "Three" });
    // Back-dated, not the clock moved: that would also end keep-2's lease, which must hold.
    await sql.query(`UPDATE idempotency_receipts SET created_at = work_graph_clock() - interval '25 hours' WHERE key = 'fresh-key'`);
    const replay = (await worker.leases.claim({ durationSeconds: 60, idempotencyKey: "fresh-key" }))!;
    expect(replay.workItem.id).toBe("keep-3");
  });
});

describe("prepared statements", () => {
  it("10,000 calls with distinct SQL texts keep each connection's statement cache bounded", async ({ database }) => {
    const instance = testInstance(database.url, { poolSize: 1, namedStatements: true });
    const db = instance.db;
    try {
      for (let i = 0; i < 10_000; i++) {
        // A distinct text per call, half of them a VALUES list that grows with its input.
        if (i % 2 === 0) await db.$queryRaw`SELECT ${i}::int AS ${Prisma.raw(`"c${i}"`)}`;
        else await db.$queryRaw`SELECT count(*) FROM (VALUES ${Prisma.join(Array.from({ length: (i % 97) + 1 }, (_, k) => Prisma.sql`(${k}::int)`))}) v${Prisma.raw(String(i))}(n)`;
      }
      const [row] = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_prepared_statements`;
      expect(row!.n).toBeGreaterThan(0);
      expect(row!.n).toBeLessThanOrEqual(MAX_NAMED_STATEMENTS);
    } finally {
      await instance.close();
    }
  }, 300_000);
});
