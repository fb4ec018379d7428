import client from "prom-client";
import { metricsCacheMs } from "./config";
import type { Db } from "./db";
import { afterCommit, type Tx } from "./database/transaction";
import { DEFAULT_PROJECT, LEASE_NOT_CURRENT_KINDS, LEASE_OUTCOMES, STAGES } from "@work-graph/contract";
import type { Stage } from "@work-graph/contract";
import { summary, type Summary } from "./queries/dashboard";
import { listLimits } from "./queries/limits";
import { oldestOpenAttentionSeconds } from "./sql/attention";
import { countItemsByProjectAndStage } from "./sql/dashboard";

/**
 * Prometheus metrics (docs/api.md "Metrics"). Counters and histograms are per app instance and
 * are moved where the work happens, through the small functions below, after the transaction
 * that did the work commits (a rolled-back or replayed attempt counts nothing). Gauges read the
 * database (dashboard.summary's two queries and one index probe), cached briefly, so a scrape
 * costs at most those three queries however often it comes.
 */

function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const created = {
    registry,
    leasesClaimed: new client.Counter({ name: "work_graph_leases_claimed_total", help: "Leases granted (every claim path: next, named, decomposition child).", registers }),
    leasesEnded: new client.Counter({
      name: "work_graph_leases_ended_total",
      help: "Leases ended, by outcome (API, expiry sweep, reclaim and cascades).",
      labelNames: ["outcome"] as const,
      registers,
    }),
    fenced: new client.Counter({
      name: "work_graph_fenced_total",
      help: "Calls refused with LEASE_NOT_CURRENT, by detail.kind.",
      labelNames: ["kind"] as const,
      registers,
    }),
    httpRequests: new client.Counter({
      name: "work_graph_http_requests_total",
      help: "tRPC calls over HTTP, by procedure and HTTP status code (each call of a batch counts once).",
      labelNames: ["procedure", "code"] as const,
      registers,
    }),
    claimSeconds: new client.Histogram({
      name: "work_graph_claim_seconds",
      help: "Duration of leases.claim in the server, including its transaction.",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    leaseHeldSeconds: new client.Histogram({
      name: "work_graph_lease_held_seconds",
      help: "Time from claim to the lease's end, by outcome.",
      labelNames: ["outcome"] as const,
      // one second to a day: quick agent steps up to long-running work
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 28800, 86400],
      registers,
    }),
    attentionWaitSeconds: new client.Histogram({
      name: "work_graph_attention_wait_seconds",
      help: "Time an attention request waited for its answer.",
      // ten seconds to a week: a human answering at once up to one away for days
      buckets: [10, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 172800, 345600, 604800],
      registers,
    }),
    items: new client.Gauge({
      name: "work_graph_items",
      help: "Work items by stage and project (as dashboard.summary with that projectId).",
      labelNames: ["stage", "project"] as const,
      registers,
    }),
    attentionOpen: new client.Gauge({ name: "work_graph_attention_open", help: "Open attention requests.", registers }),
    attentionOldestOpen: new client.Gauge({
      name: "work_graph_attention_oldest_open_seconds",
      help: "Age of the oldest open attention request (0 when none is open).",
      registers,
    }),
    leasesActive: new client.Gauge({ name: "work_graph_leases_active", help: "Live leases.", registers }),
    limitLiveLeases: new client.Gauge({
      name: "work_graph_limit_live_leases",
      help: "Live leases per concurrency key that has a limit (rule 14); keys without a limit have no series.",
      labelNames: ["key"] as const,
      registers,
    }),
    // Waiter gauges (long-polling claims and attention waits) and
    // work_graph_webhook_deliveries_total{status} are registered here when those features land.
  };
  // Every series of a known label value exists at 0 from the start, so rate(), dashboards and
  // alerts see it before its first event. (http_requests' status codes are not a known list.)
  for (const outcome of LEASE_OUTCOMES) {
    created.leasesEnded.inc({ outcome }, 0);
    created.leaseHeldSeconds.zero({ outcome });
  }
  for (const kind of LEASE_NOT_CURRENT_KINDS) created.fenced.inc({ kind }, 0);
  for (const stage of STAGES) created.items.set({ stage, project: DEFAULT_PROJECT }, 0);
  return created;
}

type Metrics = ReturnType<typeof createMetrics>;

// One set per process: Next bundles each route separately and `npm start` loads the sweep
// outside Next, so module state alone would split the counters.
const globalKey = Symbol.for("work-graph.metrics");
const holder = globalThis as unknown as { [globalKey]?: Metrics };

function metrics(): Metrics {
  return (holder[globalKey] ??= createMetrics());
}

const seconds = (from: Date | string, to: Date | string) => Math.max(0, (new Date(to).getTime() - new Date(from).getTime()) / 1000);

/** A lease was granted in `tx` (or by an autocommit statement of `db`); returns `result` unchanged so a claim path can wrap its return. */
export function countClaim<T>(tx: Tx | Db, result: T): T {
  afterCommit(tx, () => metrics().leasesClaimed.inc());
  return result;
}

/** Leases ended in `tx` with `outcome`; `acquiredAt`/`endedAt` give the hold time. */
export function countLeasesEnded(tx: Tx | Db, outcome: string, leases: { acquiredAt: Date | string; endedAt: Date | string | null }[]): void {
  if (leases.length === 0) return;
  afterCommit(tx, () => {
    const m = metrics();
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
export function countFenced<E>(kind: string, error: E): E {
  metrics().fenced.inc({ kind });
  return error;
}

/** An attention request was answered in `tx`. */
export function countAttentionAnswered(tx: Tx, request: { createdAt: Date | string; resolvedAt: Date | string | null }): void {
  if (request.resolvedAt) afterCommit(tx, () => metrics().attentionWaitSeconds.observe(seconds(request.createdAt, request.resolvedAt!)));
}

/** Times a claim operation (also the ones that find nothing to claim, not the refused ones). */
export async function timeClaim<T>(claim: () => Promise<T>): Promise<T> {
  const stop = metrics().claimSeconds.startTimer();
  const result = await claim();
  stop();
  return result;
}

export function countHttpRequest(procedure: string, code: number): void {
  metrics().httpRequests.inc({ procedure, code: String(code) });
}

interface GaugeValues {
  summary: Summary;
  itemsByProject: { projectId: string; stage: Stage | null; n: number }[];
  oldestOpenAttentionSeconds: number;
  limits: { key: string; liveLeases: number }[];
}

/** dashboard.summary (so the gauges equal what the dashboard shows) and the oldest open request, through its (status, created_at) index. */
async function readGauges(db: Db): Promise<GaugeValues> {
  const [current, oldestSeconds, itemsByProject, limits] = await Promise.all([
    summary(db, { projects: [] }), oldestOpenAttentionSeconds(db), countItemsByProjectAndStage(db), listLimits(db),
  ]);
  return { summary: current, oldestOpenAttentionSeconds: oldestSeconds, itemsByProject, limits };
}

let gaugeRead: { at: number; pending: Promise<GaugeValues> } | undefined;

/** Reads the gauges' values; concurrent scrapes within the cache window share one read. */
async function refreshGauges(db: Db): Promise<void> {
  const now = Date.now();
  if (!gaugeRead || now - gaugeRead.at >= metricsCacheMs()) {
    gaugeRead = { at: now, pending: readGauges(db) };
    gaugeRead.pending.catch(() => (gaugeRead = undefined));
  }
  const { summary: current, oldestOpenAttentionSeconds, itemsByProject, limits } = await gaugeRead.pending;
  const m = metrics();
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
  const { registry } = metrics();
  return { contentType: registry.contentType, body: await registry.metrics() };
}
