/**
 * Observability costs at scale: a Prometheus scrape (gauges read uncached, and within the
 * cache window) on a graph of `items` open items, and dashboard.activity for each range over
 * `events` events spread over the last 90 days.
 */
import { createInstance } from "../server/instance";
import { renderMetrics } from "../server/metrics";
import { ACTIVITY_RANGES, activity, type ActivityRange } from "../server/queries/activity";
import { buildGraph, percentile, sql } from "./support";

export interface ObservabilityResult {
  openItems: number;
  events: number;
  eventsPerRange: Record<ActivityRange, number>;
  scrapeUncachedP50: number;
  scrapeUncachedP99: number;
  scrapeCachedP50: number;
  scrapeBytes: number;
  activity: Record<ActivityRange, { p50: number; p99: number }>;
}

const DAYS = 90;

/**
 * `count` events with the type mix of a working fleet (claims, lease ends by outcome,
 * attention, notes, renewals), uniformly over the last DAYS days, on existing items.
 */
async function seedEvents(url: string, count: number) {
  await sql(url, `
    WITH items AS (SELECT id, (row_number() OVER (ORDER BY id) - 1)::int AS n FROM work_items),
    total AS (SELECT count(*)::int AS c FROM items)
    INSERT INTO events (work_item_id, type, actor, epoch, data, created_at)
    SELECT items.id, kind.type, 'bench', 1 + (g % 3), kind.data,
           now() - make_interval(secs => (g::float8 / ${count}) * ${DAYS} * 86400)
      FROM total, generate_series(1, ${count}) g JOIN items ON items.n = g % (SELECT c FROM total),
           LATERAL (SELECT CASE
             WHEN g % 100 < 25 THEN 'lease.claimed'
             WHEN g % 100 < 45 THEN 'lease.ended'
             WHEN g % 100 < 47 THEN 'lease.ended'
             WHEN g % 100 < 48 THEN 'lease.ended'
             WHEN g % 100 < 50 THEN 'attention.requested'
             WHEN g % 100 < 52 THEN 'attention.resolved'
             WHEN g % 100 < 70 THEN 'lease.renewed'
             ELSE 'note.added' END AS type,
             CASE
             WHEN g % 100 BETWEEN 25 AND 44 THEN '{"outcome":"released"}'::jsonb
             WHEN g % 100 BETWEEN 45 AND 46 THEN '{"outcome":"expired"}'::jsonb
             WHEN g % 100 = 47 THEN '{"outcome":"revoked"}'::jsonb
             WHEN g % 100 BETWEEN 50 AND 51 THEN jsonb_build_object('requestId', gen_random_uuid())
             ELSE '{}'::jsonb END AS data) kind`);
  await sql(url, "VACUUM ANALYZE events");
}

async function timed(samples: number, run: () => Promise<unknown>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t = performance.now();
    await run();
    ms.push(performance.now() - t);
  }
  return ms;
}

export async function observability(url: string, items: number, events: number, samples: number): Promise<ObservabilityResult> {
  const graph = await buildGraph(url, items);
  await seedEvents(url, events);
  const eventsPerRange = {} as Record<ActivityRange, number>;
  for (const range of Object.keys(ACTIVITY_RANGES) as ActivityRange[]) {
    const { bucketSeconds, buckets } = ACTIVITY_RANGES[range];
    eventsPerRange[range] = Number((await sql(url, "SELECT count(*) AS n FROM events WHERE created_at >= now() - make_interval(secs => $1)", [bucketSeconds * buckets])).rows[0].n);
  }
  const dbInstance = createInstance({ databaseUrl: url, connectTimeoutMs: 5_000, poolSize: 4 });
  const db = dbInstance.db;
  try {
    process.env.WORK_GRAPH_METRICS_CACHE_MS = "0";
    await timed(5, () => renderMetrics(db)); // warm-up: connections, prepared statements
    const uncached = await timed(samples, () => renderMetrics(db));
    process.env.WORK_GRAPH_METRICS_CACHE_MS = "60000";
    await renderMetrics(db);
    const cached = await timed(samples, () => renderMetrics(db));
    const scrapeBytes = Buffer.byteLength((await renderMetrics(db)).body);
    delete process.env.WORK_GRAPH_METRICS_CACHE_MS;

    const latency = {} as ObservabilityResult["activity"];
    for (const range of Object.keys(ACTIVITY_RANGES) as ActivityRange[]) {
      await timed(3, () => activity(db, range));
      const ms = await timed(samples, () => activity(db, range));
      latency[range] = { p50: percentile(ms, 50), p99: percentile(ms, 99) };
    }
    return {
      openItems: graph.open,
      events,
      eventsPerRange,
      scrapeUncachedP50: percentile(uncached, 50),
      scrapeUncachedP99: percentile(uncached, 99),
      scrapeCachedP50: percentile(cached, 50),
      scrapeBytes,
      activity: latency,
    };
  } finally {
    await dbInstance.close();
  }
}

export function renderObservability(result: ObservabilityResult | null): string[] {
  if (!result) return ["### Observability", "", "Not run."];
  const r = result;
  return [
    `### Observability (${r.openItems.toLocaleString("en")} open items, ${r.events.toLocaleString("en")} events over ${DAYS} days)`,
    "",
    "| measurement | p50 (ms) | p99 (ms) |",
    "|---|---:|---:|",
    `| /api/metrics scrape, gauges read (3 queries) | ${r.scrapeUncachedP50.toFixed(2)} | ${r.scrapeUncachedP99.toFixed(2)} |`,
    `| /api/metrics scrape within the cache window (0 queries) | ${r.scrapeCachedP50.toFixed(2)} | — |`,
    ...(Object.keys(r.activity) as ActivityRange[]).map(
      (range) => `| dashboard.activity, last ${range} (${r.eventsPerRange[range].toLocaleString("en")} events in range) | ${r.activity[range].p50.toFixed(2)} | ${r.activity[range].p99.toFixed(2)} |`,
    ),
    "",
    `A scrape is ${(r.scrapeBytes / 1024).toFixed(1)} KiB of text.`,
  ];
}
