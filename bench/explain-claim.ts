/**
 * `npx tsx bench/explain-claim.ts [items]` — EXPLAIN (ANALYZE, BUFFERS) of the next claim's
 * probe (server/sql/claims.ts: one tier of nextClaimableSql) on the scale graph, unrouted and
 * with the queue policy of bench/support.ts ROUTING. BENCHMARKS.md quotes its output.
 */
import { Prisma } from "../server/generated/prisma/client";
import { createInstance } from "../server/instance";
import { migrateDeploy } from "../server/database/migrate";
import { QUEUE_ORDER, UNLEASED_READY_SQL } from "../server/domain/readiness";
import { ROUTED } from "../server/domain/routing";
import { buildGraph, createDatabase, ROUTING, startServer } from "./support";

const items = Number(process.argv[2] ?? 100_000);
const server = await startServer();
try {
  const half = Array.from({ length: ROUTING.capabilities / 2 }, (_, i) => `cap-${i}`);
  for (const routed of [false, true]) {
    const url = await createDatabase(server.adminUrl, routed ? "bench_explain_routed" : "bench_explain");
    await migrateDeploy(url);
    await buildGraph(url, items, { routed });
    const dbInstance = createInstance({ databaseUrl: url, connectTimeoutMs: 5_000, poolSize: 1 });
    const db = dbInstance.db;
    const probe = (routing: Parameters<typeof ROUTED>[0]) => Prisma.sql`
      SELECT w.id FROM work_items w WHERE ${Prisma.raw(UNLEASED_READY_SQL)} AND ${ROUTED(routing)} ORDER BY ${QUEUE_ORDER} LIMIT 1 FOR UPDATE SKIP LOCKED`;
    const explain = async (title: string, routing: Parameters<typeof ROUTED>[0]) => {
      for (let i = 0; i < 3; i++) await db.$queryRaw(Prisma.sql`EXPLAIN (ANALYZE) ${probe(routing)}`); // warm the cache
      const rows = await db.$queryRaw<{ "QUERY PLAN": string }[]>(Prisma.sql`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${probe(routing)}`);
      console.log(`\n-- ${title}\n${rows.map((row) => row["QUERY PLAN"]).join("\n")}`);
    };
    if (!routed) await explain(`${items} items, no queue policy, a worker without capabilities`, { projects: [], capabilities: [] });
    else {
      await explain(`${items} items routed, ${half.length} capabilities, every project`, { projects: [], capabilities: half });
      await explain(`${items} items routed, ${half.length} capabilities, project p1`, { projects: [], projectId: "p1", capabilities: half });
    }
    await dbInstance.close();
  }
} finally {
  await server.stop();
}
