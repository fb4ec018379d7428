import type { Db } from "../db";
import type { Caller } from "../domain/types";
import { activityScope, selectActivity, type PercentileRow } from "../sql/activity";

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

/**
 * What happened over the last hour, day or week, in equal intervals ending at the database's
 * now: claims, releases, expiries, revocations and attention requests per interval; p50/p90 of
 * the time from ready to claimed for claims in the interval; p50/p90 of how long attention
 * requests answered in the interval waited. One statement, so every part sees the same now.
 *
 * "Ready" is when the claimed item last became claimable as far as its own history shows: the
 * latest of its creation, its previous lease's end, its last blocking attention answer, and
 * the last finish of one of its children or blockers. Blocking by an ancestor's dependency is
 * not traced (it would mean walking the tree per claim), so such waits count from the latest
 * of those moments. Over more than READY_WAIT_SAMPLE (server/sql/activity.ts) claims the percentiles are estimates: the
 * sample is every k-th claim time from the index, and the claims at those times are read
 * together in one index scan (claims sharing a sampled instant are all in the sample, so
 * below READY_WAIT_SAMPLE every claim is counted exactly once).
 */
export async function activity(db: Db, range: ActivityRange, caller: Pick<Caller, "projects"> = { projects: [] }): Promise<Activity> {
  const { bucketSeconds, buckets: bucketCount } = ACTIVITY_RANGES[range];
  const row = await selectActivity(db, bucketSeconds, bucketCount, activityScope(caller.projects));
  const since = row.since.getTime();
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

  for (const { kind, start, n } of row.counts) {
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
  place(row.ready, "readyToClaimP50", "readyToClaimP90");
  place(row.attention, "attentionWaitP50", "attentionWaitP90");
  return { range, bucketSeconds, from: row.since.toISOString(), to: row.now.toISOString(), buckets, totals };
}
