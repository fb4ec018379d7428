import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import { itemInProjects } from "../domain/scope";

export interface CountRow {
  kind: "claims" | "releases" | "expiries" | "revocations" | "attentionRequests";
  start: string;
  n: number;
}
export interface PercentileRow {
  start: string | null;
  p: [number, number];
}

export interface ActivityRow {
  now: Date;
  since: Date;
  counts: CountRow[];
  ready: PercentileRow[];
  attention: PercentileRow[];
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
 * The activity of the last `bucketCount` intervals of `bucketSeconds` ending at the database's
 * now, in one statement (server/queries/activity.ts says what each part measures).
 *
 * Every count is an index-only range scan: claims and attention requests through
 * events_type_created_at_idx, lease ends through one partial index per counted outcome (the
 * outcome lives in `data`; the literal predicates below must stay literal, not parameters, so
 * that a generic plan of the prepared statement can still use those indexes).
 */
/** `inScope`: Prisma.empty for every project, else `AND …` over events `e` (rule 12 (projects scope tokens)), see activityScope. */
export async function selectActivity(db: Db, bucketSeconds: number, bucketCount: number, inScope: Prisma.Sql = Prisma.empty): Promise<ActivityRow> {
  const inRange = Prisma.sql`${IN_RANGE} ${inScope}`;
  const [row] = await db.$queryRaw<ActivityRow[]>`
    WITH r AS (
      SELECT work_graph_now() AS now,
             work_graph_now() - make_interval(secs => ${bucketSeconds * bucketCount}) AS since,
             make_interval(secs => ${bucketSeconds}) AS width
    ), claim_times AS (
      SELECT e.created_at, row_number() OVER (ORDER BY e.created_at) AS n
        FROM events e WHERE e.type = 'lease.claimed' AND ${inRange}
    ), counts AS (
      SELECT 'claims' AS kind, ${BUCKET} AS start, count(*)::int AS n FROM claim_times e GROUP BY 2
      UNION ALL
      SELECT 'releases', ${BUCKET}, count(*)::int FROM events e
       WHERE e.type = 'lease.ended' AND e.data->>'outcome' = 'released' AND ${inRange} GROUP BY 2
      UNION ALL
      SELECT 'expiries', ${BUCKET}, count(*)::int FROM events e
       WHERE e.type = 'lease.ended' AND e.data->>'outcome' = 'expired' AND ${inRange} GROUP BY 2
      UNION ALL
      SELECT 'revocations', ${BUCKET}, count(*)::int FROM events e
       WHERE e.type = 'lease.ended' AND e.data->>'outcome' = 'revoked' AND ${inRange} GROUP BY 2
      UNION ALL
      SELECT 'attentionRequests', ${BUCKET}, count(*)::int FROM events e
       WHERE e.type = 'attention.requested' AND ${inRange} GROUP BY 2
    ), sampled AS (
      SELECT e.work_item_id, e.epoch, e.created_at
        FROM events e
       WHERE e.type = 'lease.claimed' ${inScope}
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
       WHERE e.type = 'attention.resolved' AND ${inRange}
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
  return row!;
}

/** Rule 12 (projects scope tokens) over events `e`: nothing for an unscoped caller (the statement stays as it was), else only events of its projects' items. */
export const activityScope = (projects: string[]): Prisma.Sql => itemInProjects(projects, Prisma.raw("e.work_item_id"));
