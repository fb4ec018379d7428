import { metricsCacheMs } from "./config";
import type { Db } from "./db";
import { afterCommit, type Tx } from "./database/transaction";
import { STAGES } from "@work-graph/contract";
import { summary } from "./queries/dashboard";
import { listLimits } from "./queries/limits";
import { oldestOpenAttentionSeconds } from "./sql/attention";
import { countItemsByProjectAndStage } from "./sql/dashboard";
import type { GaugeValues, Metrics } from "./metric-registry";

/**
 * Prometheus metrics (docs/api.md "Metrics"). Counters and histograms are per app instance and
 * are moved where the work happens, through the small functions below, after the transaction
 * that did the work commits (a rolled-back or replayed attempt counts nothing). Gauges read the
 * database (dashboard.summary's two queries and one index probe), cached briefly, so a scrape
 * costs at most those three queries however often it comes.
 */


const seconds = (from: Date | string, to: Date | string) => Math.max(0, (new Date(to).getTime() - new Date(from).getTime()) / 1000);

/** A lease was granted in `tx` (or by an autocommit statement of `db`); returns `result` unchanged so a claim path can wrap its return. */
export function countClaim<T>(tx: Tx | Db, result: T): T {
  const m = tx.$executor().metrics;
  afterCommit(tx, () => m.leasesClaimed.inc());
  return result;
}

/** Leases ended in `tx` with `outcome`; `acquiredAt`/`endedAt` give the hold time. */
export function countLeasesEnded(tx: Tx | Db, outcome: string, leases: { acquiredAt: Date | string; endedAt: Date | string | null }[]): void {
  if (leases.length === 0) return;
  const m = tx.$executor().metrics;
  afterCommit(tx, () => {
    for (const lease of leases) {
      m.leasesEnded.inc({ outcome });
      if (lease.endedAt) m.leaseHeldSeconds.observe({ outcome }, seconds(lease.acquiredAt, lease.endedAt));
    }
  });
}

/** One lease ended in `tx` (its row carries the outcome). */
export function countLeaseEnded(tx: Tx | Db, lease: { outcome: string | null; acquiredAt: Date | string; endedAt: Date | string | null }): void {
  countLeasesEnded(tx, lease.outcome ?? "unknown", [lease]);
}

/** A call was refused with LEASE_NOT_CURRENT; returns `error` so the refusal can be thrown in the same expression. */
export function countFenced<E>(tx: Tx | Db, kind: string, error: E): E {
  tx.$executor().metrics.fenced.inc({ kind });
  return error;
}

/** An attention request was answered in `tx`. */
export function countAttentionAnswered(tx: Tx, request: { createdAt: Date | string; resolvedAt: Date | string | null }): void {
  const m = tx.$executor().metrics;
  if (request.resolvedAt) afterCommit(tx, () => m.attentionWaitSeconds.observe(seconds(request.createdAt, request.resolvedAt!)));
}

/** Times a claim operation (also the ones that find nothing to claim, not the refused ones). */
export async function timeClaim<T>(db: Db, claim: () => Promise<T>): Promise<T> {
  const stop = db.$executor().metrics.claimSeconds.startTimer();
  const result = await claim();
  stop();
  return result;
}

export function countHttpRequest(metrics: Metrics, procedure: string, code: number): void {
  metrics.httpRequests.inc({ procedure, code: String(code) });
}


/** dashboard.summary (so the gauges equal what the dashboard shows) and the oldest open request, through its (status, created_at) index. */
async function readGauges(db: Db): Promise<GaugeValues> {
  const [current, oldestSeconds, itemsByProject, limits] = await Promise.all([
    summary(db, { projects: [] }), oldestOpenAttentionSeconds(db), countItemsByProjectAndStage(db), listLimits(db),
  ]);
  return { summary: current, oldestOpenAttentionSeconds: oldestSeconds, itemsByProject, limits };
}

/** Reads the gauges' values; concurrent scrapes within the cache window share one read. */
async function refreshGauges(db: Db): Promise<void> {
  const m = db.$executor().metrics;
  const now = Date.now();
  if (!m.gaugeRead || now - m.gaugeRead.at >= metricsCacheMs()) {
    const read = { at: now, pending: readGauges(db) };
    m.gaugeRead = read;
    read.pending.catch(() => {
      if (m.gaugeRead === read) m.gaugeRead = undefined;
    });
  }
  const { summary: current, oldestOpenAttentionSeconds, itemsByProject, limits } = await m.gaugeRead.pending;
  // One series per project and stage: bounded by the number of projects, which only operators create.
  for (const projectId of new Set(itemsByProject.map((row) => row.projectId))) {
    for (const stage of STAGES) m.items.set({ stage, project: projectId }, 0);
  }
  for (const row of itemsByProject) if (row.stage !== null) m.items.set({ stage: row.stage, project: row.projectId }, Number(row.n));
  m.attentionOpen.set(current.openAttention);
  m.attentionOldestOpen.set(oldestOpenAttentionSeconds);
  m.leasesActive.set(current.activeLeases);
  // A deleted limit's series goes away with it.
  m.limitLiveLeases.reset();
  for (const { key, liveLeases } of limits) m.limitLiveLeases.set({ key }, liveLeases);
}

/** The scrape: gauges refreshed (or cached), then every metric in the Prometheus text format. */
export async function renderMetrics(db: Db): Promise<{ contentType: string; body: string }> {
  await refreshGauges(db);
  const { registry } = db.$executor().metrics;
  return { contentType: registry.contentType, body: await registry.metrics() };
}
