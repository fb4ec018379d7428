import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";

export const ACTIVITY_RANGES = {
  hour: { bucketSeconds: 5 * 60, buckets: 12 },
  day: { bucketSeconds: 60 * 60, buckets: 24 },
  week: { bucketSeconds: 6 * 60 * 60, buckets: 28 },
} as const;

export type ActivityRange = keyof typeof ACTIVITY_RANGES;

export interface ActivityCounts {
  claims: number;
  releases: number;
  expiries: number;
  revocations: number;
  attentionRequests: number;
}

/** Seconds; null when nothing happened in the interval. */
export interface ActivityPercentiles {
  readyToClaimP50: number | null;
  readyToClaimP90: number | null;
  attentionWaitP50: number | null;
  attentionWaitP90: number | null;
}

export type ActivityBucket = { start: string; end: string } & ActivityCounts & ActivityPercentiles;

export interface Activity {
  range: ActivityRange;
  bucketSeconds: number;
  from: string;
  to: string;
  buckets: ActivityBucket[];
  totals: ActivityCounts & ActivityPercentiles;
}

interface CountRow {
  kind: keyof ActivityCounts;
  start: string;
  n: number;
}
interface PercentileRow {
  start: string | null;
  p: [number, number];
}

/**
 * Ready → claimed needs a few index probes per claim, so over a busy week it is measured on an
 * evenly spread sample of at most this many claims (every k-th in time order); below it, on
 * every claim. p50/p90 of 1,000 samples are within a few percentile points.
 */
export const READY_WAIT_SAMPLE = 1000;

/**
 * `e.created_at` within the statement's range (the CTE `r`), and its interval. Read through
 * scalar subqueries rather than a join with `r`, so an index scan's order survives (the claim
 * times are numbered in index order, without a sort).
 */
const IN_RANGE = Prisma.sql`e.created_at >= (SELECT since FROM r) AND e.created_at < (SELECT now FROM r)`;
const BUCKET = Prisma.sql`date_bin((SELECT width FROM r), e.created_at, (SELECT since FROM r))`;

/**
 * What happened over the last hour, day or week, in equal intervals ending at the database's
 * now: claims, releases, expiries, revocations and attention requests per interval; p50/p90 of
 * the time from ready to claimed for claims in the interval; p50/p90 of how long attention
 * requests answered in the interval waited. One statement, so every part sees the same now.
 *
 * Every count is an index-only range scan: claims and attention requests through
 * events_type_created_at_idx, lease ends through one partial index per counted outcome (the
 * outcome lives in `data`; the literal predicates below must stay literal, not parameters, so
 * that a generic plan of the prepared statement can still use those indexes).
 *
 * "Ready" is when the claimed item last became claimable as far as its own history shows: the
 * latest of its creation, its previous lease's end, its last blocking attention answer, and
 * the last finish of one of its children or blockers. Blocking by an ancestor's dependency is
 * not traced (it would mean walking the tree per claim), so such waits count from the latest
 * of those moments. Over more than READY_WAIT_SAMPLE claims the percentiles are estimates: the
 * sample is every k-th claim time from the index, and the claims at those times are read
 * together in one index scan (claims sharing a sampled instant are all in the sample, so
 * below READY_WAIT_SAMPLE every claim is counted exactly once).
 */
export async function activity(db: Db, range: ActivityRange): Promise<Activity> {
  const { bucketSeconds, buckets: bucketCount } = ACTIVITY_RANGES[range];
  const [row] = await db.$queryRaw<{ now: Date; since: Date; counts: CountRow[]; ready: PercentileRow[]; attention: PercentileRow[] }[]>`
    WITH r AS (
      SELECT statement_timestamp() AS now,
             statement_timestamp() - make_interval(secs => ${bucketSeconds * bucketCount}) AS since,
             make_interval(secs => ${bucketSeconds}) AS width
    ), claim_times AS (
      SELECT e.created_at, row_number() OVER (ORDER BY e.created_at) AS n
        FROM events e WHERE e.type = 'lease.claimed' AND ${IN_RANGE}
    ), counts AS (
      SELECT 'claims' AS kind, ${BUCKET} AS start, count(*)::int AS n FROM claim_times e GROUP BY 2
      UNION ALL
      SELECT 'releases', ${BUCKET}, count(*)::int FROM events e
       WHERE e.type = 'lease.ended' AND e.data->>'outcome' = 'released' AND ${IN_RANGE} GROUP BY 2
      UNION ALL
      SELECT 'expiries', ${BUCKET}, count(*)::int FROM events e
       WHERE e.type = 'lease.ended' AND e.data->>'outcome' = 'expired' AND ${IN_RANGE} GROUP BY 2
      UNION ALL
      SELECT 'revocations', ${BUCKET}, count(*)::int FROM events e
       WHERE e.type = 'lease.ended' AND e.data->>'outcome' = 'revoked' AND ${IN_RANGE} GROUP BY 2
      UNION ALL
      SELECT 'attentionRequests', ${BUCKET}, count(*)::int FROM events e
       WHERE e.type = 'attention.requested' AND ${IN_RANGE} GROUP BY 2
    ), sampled AS (
      SELECT e.work_item_id, e.epoch, e.created_at
        FROM events e
       WHERE e.type = 'lease.claimed'
         AND e.created_at = ANY (ARRAY(
               SELECT t.created_at FROM claim_times t
                WHERE (t.n - 1) % (SELECT greatest(1, ceil(count(*) / ${READY_WAIT_SAMPLE}::numeric))::bigint FROM claim_times) = 0))
    ), ready_waits AS (
      SELECT ${BUCKET} AS start,
             greatest(0, extract(epoch FROM e.created_at - greatest(
               w.created_at,
               (SELECT p.ended_at FROM leases p WHERE p.work_item_id = e.work_item_id AND p.epoch = e.epoch - 1),
               (SELECT max(a.resolved_at) FROM attention_requests a
                 WHERE a.work_item_id = e.work_item_id AND a.blocking AND a.resolved_at <= e.created_at),
               (SELECT max(c.updated_at) FROM work_items c
                 WHERE c.parent_id = e.work_item_id AND c.status <> 'open' AND c.updated_at <= e.created_at),
               (SELECT max(b.updated_at) FROM dependencies d JOIN work_items b ON b.id = d.depends_on_id
                 WHERE d.work_item_id = e.work_item_id AND b.status <> 'open' AND b.updated_at <= e.created_at)
             )))::float8 AS seconds
        FROM sampled e JOIN work_items w ON w.id = e.work_item_id
    ), attention_waits AS (
      SELECT ${BUCKET} AS start,
             extract(epoch FROM a.resolved_at - a.created_at)::float8 AS seconds
        FROM events e JOIN attention_requests a ON a.id = (e.data->>'requestId')::uuid
       WHERE e.type = 'attention.resolved' AND ${IN_RANGE}
    ), ready AS (
      SELECT start, percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY seconds) AS p
        FROM ready_waits GROUP BY GROUPING SETS ((start), ())
    ), attention AS (
      SELECT start, percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY seconds) AS p
        FROM attention_waits GROUP BY GROUPING SETS ((start), ())
    )
    SELECT r.now, r.since,
           (SELECT coalesce(json_agg(counts), '[]') FROM counts) AS counts,
           (SELECT coalesce(json_agg(ready), '[]') FROM ready WHERE p IS NOT NULL) AS ready,
           (SELECT coalesce(json_agg(attention), '[]') FROM attention WHERE p IS NOT NULL) AS attention
      FROM r`;
  const since = row!.since.getTime();
  const width = bucketSeconds * 1000;
  const indexOf = (start: string) => Math.round((new Date(start).getTime() - since) / width);

  const nothing = (): ActivityCounts & ActivityPercentiles => ({
    claims: 0,
    releases: 0,
    expiries: 0,
    revocations: 0,
    attentionRequests: 0,
    readyToClaimP50: null,
    readyToClaimP90: null,
    attentionWaitP50: null,
    attentionWaitP90: null,
  });
  const buckets: ActivityBucket[] = Array.from({ length: bucketCount }, (_, i) => ({
    start: new Date(since + i * width).toISOString(),
    end: new Date(since + (i + 1) * width).toISOString(),
    ...nothing(),
  }));
  const totals = nothing();

  for (const { kind, start, n } of row!.counts) {
    const bucket = buckets[indexOf(start)];
    if (!bucket) continue;
    bucket[kind] = n;
    totals[kind] += n;
  }
  const place = (rows: PercentileRow[], p50: "readyToClaimP50" | "attentionWaitP50", p90: "readyToClaimP90" | "attentionWaitP90") => {
    for (const { start, p } of rows) {
      const target = start === null ? totals : buckets[indexOf(start)];
      if (!target) continue;
      target[p50] = Math.round(p[0] * 1000) / 1000;
      target[p90] = Math.round(p[1] * 1000) / 1000;
    }
  };
  place(row!.ready, "readyToClaimP50", "readyToClaimP90");
  place(row!.attention, "attentionWaitP50", "attentionWaitP90");
  return { range, bucketSeconds, from: row!.since.toISOString(), to: row!.now.toISOString(), buckets, totals };
}
