import client from "prom-client";
import { DEFAULT_PROJECT, LEASE_NOT_CURRENT_KINDS, LEASE_OUTCOMES, STAGES, type Stage } from "@work-graph/contract";

/** What a scrape reads of the database for the gauges (server/metrics.ts). */
export interface GaugeValues {
  /** dashboard.summary's counts the gauges show. */
  summary: { openAttention: number; activeLeases: number };
  itemsByProject: { projectId: string; stage: Stage | null; n: number }[];
  oldestOpenAttentionSeconds: number;
  limits: { key: string; liveLeases: number }[];
}

/** The metrics of one instance (server/instance.ts): counters since it started, and its cached gauge read. */
export function createMetrics() {
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
  };
  // Every series of a known label value exists at 0 from the start, so rate(), dashboards and
  // alerts see it before its first event. (http_requests' status codes are not a known list.)
  for (const outcome of LEASE_OUTCOMES) {
    created.leasesEnded.inc({ outcome }, 0);
    created.leaseHeldSeconds.zero({ outcome });
  }
  for (const kind of LEASE_NOT_CURRENT_KINDS) created.fenced.inc({ kind }, 0);
  for (const stage of STAGES) created.items.set({ stage, project: DEFAULT_PROJECT }, 0);
  return { ...created, gaugeRead: undefined as { at: number; pending: Promise<GaugeValues> } | undefined };
}

export type Metrics = ReturnType<typeof createMetrics>;
