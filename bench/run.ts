/**
 * `npm run bench` — claim throughput, latency and scale, side by side with graphile-worker,
 * pg-boss and a raw-SQL floor, on one PostgreSQL server. `npm run bench -- --smoke` runs every
 * part with tiny counts in a few seconds (CI: the harness must not rot; nothing is asserted
 * about timings). BENCH_DATABASE_URL (a superuser URL) uses your server instead of an embedded
 * one. Method and the latest full run: BENCHMARKS.md. Profiling: bench/profile.ts.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, openSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createToken } from "../server/auth/tokens";
import type { Db } from "../server/db";
import { createInstance, type Instance } from "../server/instance";
import { freePort } from "../server/database/embedded";
import { migrateDeploy } from "../server/database/migrate";
import { claim, type ClaimInput } from "../server/operations/claim";
import type { Caller } from "../server/domain/types";
import { release } from "../server/operations/finish";
import { cancelWorkItem } from "../server/operations/cancel-item";
import { summary } from "../server/queries/dashboard";
import { attentionInbox, itemNeighbourhood } from "../server/queries/dashboard-views";
import { listEvents } from "../server/queries/events";
import { activeLeases } from "../server/queries/leases";
import { listNotes } from "../server/queries/notes";
import { listWorkItems, queue } from "../server/queries/work-items";
import { startTestServer } from "../tests/support/app";
import { CONTENDERS, runContender } from "./contenders";
import { renderWaiters, waiterBenchmark, type WaiterResult } from "./waiters";
import { importBenchmark, renderImport, type ImportResult } from "./import";
import { webhookLatency, type WebhookLatencyResult } from "./webhooks";
import { observability, renderObservability, type ObservabilityResult } from "./observability";
import {
  agent, benchDir, buildGraph, ROUTING, cpuMeter, createDatabase, dropDatabase, insertReady, insertReadyWithSiblings, log, median, percentile, pg, sql, startServer,
  timedLoops, type CpuSample,
} from "./support";

/** An unscoped caller (rule 12): every read sees every project. */
const EVERY_PROJECT = { projects: [] as string[] };

// The in-process handlers would log every request of the load; the npm start row keeps its default (info).
process.env.WORK_GRAPH_LOG_LEVEL ??= "warn";
const smoke = process.argv.includes("--smoke");
const flag = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const numbers = (value: string | undefined) => value?.split(",").map(Number).filter((n) => Number.isFinite(n) && n > 0);
const config = {
  ...(smoke
    ? { windowMs: 300, warmupMs: 100, runs: 1, workers: [2], scales: [1_000], samples: 20, dependents: 100, blockers: 1, contenderSeconds: 0.3, cascade: 1_000, waiters: 40, waiterSingles: 10 }
    : { windowMs: 3_000, warmupMs: 500, runs: 3, workers: [1, 4, 16, 64], scales: [1_000, 10_000, 100_000], samples: 300, dependents: 1_000, blockers: 3, contenderSeconds: 3, cascade: 20_000, waiters: 1_000, waiterSingles: 200 }),
  // Webhook delivery latency (bench/webhooks.ts): events committed at this rate for this long.
  webhookRate: 100,
  webhookSeconds: smoke ? 1 : 20,
  // Partial runs while profiling: --only=service,http,server,cluster,floor,contenders,scale,routing,statements,fanout,waiters,webhooks,observability,import --workers=16 --scales=1000,100000 --runs=1 --cascade=20000
  ...(numbers(flag("workers")) ? { workers: numbers(flag("workers"))! } : {}),
  ...(numbers(flag("scales")) ? { scales: numbers(flag("scales"))! } : {}),
  ...(numbers(flag("runs")) ? { runs: numbers(flag("runs"))![0]! } : {}),
  ...(numbers(flag("cascade")) ? { cascade: numbers(flag("cascade"))![0]! } : {}),
};
const parts = new Set(flag("only")?.split(",") ?? ["service", "http", "server", "cluster", "floor", "contenders", "scale", "routing", "statements", "fanout", "waiters", "webhooks", "observability", "import"]);

const OURS = ["Work Graph, service layer", "Work Graph, tRPC over HTTP", "Work Graph, npm start server", "Work Graph, 2 npm start servers", "raw-SQL floor"] as const;
type Row = (typeof OURS)[number] | (typeof CONTENDERS)[number];

interface Measurement {
  perSecond: number | null;
  /** CPU per cycle (ms) of this process and of the PostgreSQL server, median over runs. */
  cpu: CpuSample | null;
  /** tRPC over HTTP: CPU per cycle of the agents' process. */
  clientCpuMs?: number;
  /** Over HTTP: median and 99th percentile claim round trip seen by the agents (ms). */
  claimP50Ms?: number;
  claimP99Ms?: number;
  /** Over HTTP with one agent: median heartbeat (leases.renew) round trip (ms). */
  renewP50Ms?: number;
  /** Over HTTP with one agent: median round trip of GET /api/health/live, no API work (ms). */
  floorP50Ms?: number;
  note?: string;
}

let postmasterPid: number | null = null;

/**
 * `config.runs` windows of `workers` loops of `cycle` (after a warm-up that opens every
 * connection and prepares every statement); the median rate and CPU per cycle.
 */
async function windows(workers: number, prepare: (run: number) => Promise<void>, cycle: (worker: number) => Promise<boolean>): Promise<Measurement> {
  const rates: number[] = [];
  const app: number[] = [];
  const server: number[] = [];
  for (let run = 0; run < config.runs; run++) {
    await prepare(run);
    await timedLoops(workers, config.warmupMs, cycle);
    const meter = cpuMeter(postmasterPid);
    const started = performance.now();
    const rate = await timedLoops(workers, config.windowMs, cycle);
    const cpu = meter.stop();
    const cycles = Math.max(1, rate * ((performance.now() - started) / 1000));
    rates.push(rate);
    app.push(cpu.appMs / cycles);
    if (cpu.postgresMs !== null) server.push(cpu.postgresMs / cycles);
  }
  return { perSecond: median(rates), cpu: { appMs: median(app), postgresMs: server.length ? median(server) : null } };
}

/** Ready items for a window at up to `perSecond` cycles/s, with room to spare. */
const supply = (workers: number, perSecond: number) => Math.ceil(workers * 20 + ((config.windowMs + config.warmupMs) / 1000) * perSecond * 1.5);

async function serviceThroughput(url: string, workers: number, namedStatements = true): Promise<Measurement> {
  const dbInstance = createInstance({ databaseUrl: url, connectTimeoutMs: 5_000, poolSize: workers, namedStatements });
  const db = dbInstance.db;
  try {
    return await windows(
      workers,
      (run) => insertReady(url, `svc-${run}-`, supply(workers, 2_000)),
      async (worker) => {
        const caller = agent(`svc-${worker}`);
        const claimed = await claim(db, caller, caller.workerId!, { durationSeconds: 300 });
        if (!claimed) return false;
        await release(db, caller, { leaseId: claimed.lease.id, epoch: claimed.lease.epoch, evidence: "bench" });
        return true;
      },
    );
  } finally {
    await dbInstance.close();
  }
}

interface ApiServer {
  url: string;
  /** CPU (ms) the server has used so far: this process, or the spawned server's. */
  cpuMs(): number;
  close(): Promise<void>;
}

/** The tRPC handler behind a node:http server in this process, as in the tests. */
async function inProcessServer(instance: Instance): Promise<ApiServer> {
  const server = await startTestServer(instance);
  return {
    url: server.url,
    cpuMs: () => {
      const used = process.cpuUsage();
      return (used.user + used.system) / 1000;
    },
    close: () => server.close(),
  };
}

/**
 * What agents get from `npm start`: scripts/start.ts in its own process (`--api-only`: the
 * API takes the same path with the dashboard, which only adds Next for pages), with its
 * defaults — request logging included — on the bench database. BENCH_SERVER_NODE_ARGS adds
 * Node flags to that process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it);
 * BENCH_SERVER_LOG names a file that keeps its request log (each line has the server-side durationMs).
 */
const BENCH_ADMIN_TOKEN = `bench-admin-${"x".repeat(40)}`;

async function npmStartServer(databaseUrl: string): Promise<ApiServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [...(process.env.BENCH_SERVER_NODE_ARGS?.split(" ") ?? []), "--import", "tsx", path.join(benchDir, "..", "scripts", "start.ts"), "--api-only"], {
    env: { ...process.env, WORK_GRAPH_LOG_LEVEL: "info", WORK_GRAPH_DB_PREPARED_STATEMENTS: "named", DATABASE_URL: databaseUrl, PORT: String(port), HOST: "127.0.0.1", WORK_GRAPH_ADMIN_TOKEN: BENCH_ADMIN_TOKEN },
    stdio: ["ignore", process.env.BENCH_SERVER_LOG ? openSync(process.env.BENCH_SERVER_LOG, "a") : "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let waited = 0; ; waited += 100) {
    if (child.exitCode !== null) throw new Error(`scripts/start.ts exited with ${child.exitCode}`);
    if (waited > 60_000) throw new Error("scripts/start.ts did not become ready within 60 s");
    const ready = await fetch(`${url}/api/health/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    cpuMs: () => {
      const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return ((Number(fields[11]) + Number(fields[12])) / 100) * 1000;
    },
    close: async () => {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}

/**
 * Agents over HTTP — one @trpc/client and one agent token per worker — in a child process
 * (bench/http-clients.ts), so the server's event loop is its own. `via` picks the server: the
 * tRPC handler in this process, or the real `npm start` server in its own. "app" CPU is the
 * server's; the clients' CPU is reported apart.
 */
async function httpThroughput(url: string, workers: number, via: "handler" | "npm start" | "2 npm start"): Promise<Measurement> {
  const dbInstance = createInstance({ databaseUrl: url, connectTimeoutMs: 5_000, poolSize: workers, namedStatements: true });
  const db = dbInstance.db;
  const servers = via === "handler" ? [await inProcessServer(dbInstance)] : await Promise.all(Array.from({ length: via === "2 npm start" ? 2 : 1 }, () => npmStartServer(url)));
  const server: ApiServer = {
    url: servers.map((one) => one.url).join(","),
    cpuMs: () => servers.reduce((sum, one) => sum + one.cpuMs(), 0),
    close: async () => void (await Promise.all(servers.map((one) => one.close()))),
  };
  const rates: number[] = [];
  const app: number[] = [];
  const pgCpu: number[] = [];
  const clientCpu: number[] = [];
  const claimP50: number[] = [];
  const claimP99: number[] = [];
  const renewP50: number[] = [];
  const floorP50: number[] = [];
  try {
    const tokens = await Promise.all(
      Array.from({ length: workers }, async (_, worker) => (await createToken(db, { role: "agent", workerId: `http-${worker}`, label: "bench" })).token),
    );
    for (let run = 0; run < config.runs; run++) {
      await insertReadyWithSiblings(url, `http-${run}-`, supply(workers, 1_500));
      const child = spawn(process.execPath, [...process.execArgv, path.join(benchDir, "http-clients.ts"), server.url, JSON.stringify({ tokens, windowMs: config.windowMs, warmupMs: config.warmupMs })], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      const waits = process.env.BENCH_WAIT_EVENTS ? sampleWaitEvents(url) : null;
      let meter: ReturnType<typeof cpuMeter> | null = null;
      let serverCpuAtWarm = 0;
      let loopDelayAtWarm: Promise<string> | null = null;
      let cpu: CpuSample | null = null;
      let output = "";
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding("utf8");
        child.stdout.on("data", (chunk: string) => {
          output += chunk;
          if (!meter && output.includes("warm\n")) {
            meter = cpuMeter(postmasterPid);
            serverCpuAtWarm = server.cpuMs();
            if (waits && via === "npm start") loopDelayAtWarm = eventLoopDelay(server.url);
          }
          if (meter && !cpu && /\{.*\}\n/.test(output)) cpu = { ...meter.stop(), appMs: server.cpuMs() - serverCpuAtWarm };
        });
        child.on("error", reject);
        child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`http-clients exited with ${code}: ${output}`))));
      });
      if (waits) {
        await loopDelayAtWarm;
        const delay = loopDelayAtWarm ? `; the server's event loop since warm-up: ${await eventLoopDelay(server.url)}` : "";
        log(`${workers} agents, run ${run + 1}: ${await waits.stop()}${delay}`);
      }
      const result = JSON.parse(output.slice(output.indexOf("{"))) as {
        rate: number; cpuMs: number; claimP50Ms: number | null; claimP99Ms: number | null; floorP50Ms: number | null; renewP50Ms: number | null;
      };
      const cycles = Math.max(1, (result.rate * config.windowMs) / 1000);
      rates.push(result.rate);
      clientCpu.push(result.cpuMs / cycles);
      if (result.claimP50Ms !== null) claimP50.push(result.claimP50Ms);
      if (result.claimP99Ms !== null) claimP99.push(result.claimP99Ms);
      if (result.renewP50Ms !== null) renewP50.push(result.renewP50Ms);
      if (result.floorP50Ms !== null) floorP50.push(result.floorP50Ms);
      if (cpu) {
        const sample: CpuSample = cpu;
        app.push(sample.appMs / cycles);
        if (sample.postgresMs !== null) pgCpu.push(sample.postgresMs / cycles);
      }
    }
  } finally {
    await server.close();
    await dbInstance.close();
  }
  return {
    perSecond: median(rates),
    cpu: { appMs: median(app), postgresMs: pgCpu.length ? median(pgCpu) : null },
    clientCpuMs: median(clientCpu),
    ...(claimP50.length ? { claimP50Ms: median(claimP50) } : {}),
    ...(claimP99.length ? { claimP99Ms: median(claimP99) } : {}),
    ...(renewP50.length ? { renewP50Ms: median(renewP50) } : {}),
    ...(floorP50.length ? { floorP50Ms: median(floorP50) } : {}),
  };
}

/** prom-client's event-loop monitor fires every 10 ms and records the whole interval, so 10 ms means no delay. */
const LOOP_MONITOR_INTERVAL_MS = 10;

/**
 * The npm start server's event-loop delay (prom-client's nodejs_eventloop_lag_* in
 * /api/metrics) since the previous scrape (prom-client resets its histogram at every scrape):
 * how late a timer ran, beyond the monitor's own interval.
 */
async function eventLoopDelay(url: string): Promise<string> {
  const response = await fetch(`${url}/api/metrics`, { headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } });
  const text = await response.text();
  const late = (name: string) =>
    Math.max(0, Number(text.match(new RegExp(`^nodejs_eventloop_lag_${name}_seconds (\\S+)$`, "m"))?.[1] ?? NaN) * 1000 - LOOP_MONITOR_INTERVAL_MS).toFixed(1);
  return `p50 ${late("p50")} ms, p99 ${late("p99")} ms, max ${late("max")} ms late`;
}

/**
 * BENCH_WAIT_EVENTS=1: what the database's busy sessions are doing during an over-HTTP run,
 * sampled from pg_stat_activity every 5 ms (a session with no wait event is on the CPU), as
 * the average number of sessions per state: where claims and releases queue under many agents;
 * and the WAL written per cycle (pg_stat_wal, cluster-wide: nothing else runs meanwhile). With
 * one npm start server, also how late its event loop ran (eventLoopDelay).
 */
function sampleWaitEvents(url: string): { stop(): Promise<string> } {
  const client = new pg.Client({ connectionString: url });
  const counts = new Map<string, number>();
  let samples = 0;
  let running = true;
  const walNow = async () => (await client.query<{ records: string; fpi: string; bytes: string; cycles: string }>(
    `SELECT wal_records AS records, wal_fpi AS fpi, wal_bytes AS bytes, (SELECT count(*) FROM leases WHERE ended_at IS NOT NULL) AS cycles FROM pg_stat_wal`)).rows[0]!;
  let walAtStart: Awaited<ReturnType<typeof walNow>> = { records: "0", fpi: "0", bytes: "0", cycles: "0" };
  let walSummary = "";
  const done = (async () => {
    await client.connect();
    walAtStart = await walNow();
    while (running) {
      const { rows } = await client.query<{ state: string; n: number }>(`
        SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS state, count(*)::int AS n
          FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid() GROUP BY 1`);
      samples++;
      for (const row of rows) counts.set(row.state, (counts.get(row.state) ?? 0) + row.n);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const walAtEnd = await walNow();
    const cycles = Math.max(1, Number(walAtEnd.cycles) - Number(walAtStart.cycles));
    const per = (key: "records" | "fpi" | "bytes") => ((Number(walAtEnd[key]) - Number(walAtStart[key])) / cycles).toFixed(1);
    walSummary = `; WAL per cycle: ${per("records")} records, ${per("fpi")} full-page images, ${per("bytes")} bytes`;
    await client.end();
  })();
  return {
    async stop() {
      running = false;
      await done;
      const busy = [...counts].sort((a, b) => b[1] - a[1]).map(([state, n]) => `${state} ${(n / Math.max(1, samples)).toFixed(2)}`);
      return `active sessions on average over ${samples} samples: ${busy.join(", ") || "none"}${walSummary}`;
    },
  };
}

/**
 * The least work one claim + complete can do: a bare table, an `UPDATE … WHERE id = (SELECT …
 * FOR UPDATE SKIP LOCKED LIMIT 1)` to claim and an `UPDATE` to complete, each its own
 * (autocommit) transaction: two commits per item, on a pg.Pool of the same size.
 */
async function floorThroughput(url: string, workers: number): Promise<Measurement> {
  await sql(url, `CREATE TABLE floor_jobs (id bigserial PRIMARY KEY, claimed_at timestamptz, done boolean NOT NULL DEFAULT false);
    CREATE INDEX floor_jobs_todo ON floor_jobs (id) WHERE claimed_at IS NULL`);
  const pool = new pg.Pool({ connectionString: url, max: workers });
  pool.on("error", () => {});
  try {
    return await windows(
      workers,
      async () => {
        await sql(url, "INSERT INTO floor_jobs (done) SELECT false FROM generate_series(1, $1)", [supply(workers, 8_000)]);
        await sql(url, "VACUUM ANALYZE floor_jobs");
      },
      async () => {
        const { rows } = await pool.query(`UPDATE floor_jobs SET claimed_at = now() WHERE id = (
          SELECT id FROM floor_jobs WHERE claimed_at IS NULL ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id`);
        if (rows.length === 0) return false;
        await pool.query("UPDATE floor_jobs SET done = true WHERE id = $1", [rows[0].id]);
        return true;
      },
    );
  } finally {
    await pool.end();
  }
}

interface ScaleResult {
  openItems: number;
  leased: number;
  claimP50: number;
  claimP99: number;
  releaseP50: number;
  releaseP99: number;
  summaryP50: number;
  summaryP99: number;
  /** p50 (ms) of each read the dashboard makes, by procedure. */
  dashboardP50: Record<string, number>;
}

/** Next-claim and release latency (one worker, one after the other) and dashboard.summary, on a graph of `n` open items. */
async function scale(url: string, n: number): Promise<ScaleResult> {
  const graph = await buildGraph(url, n);
  const dbInstance = createInstance({ databaseUrl: url, connectTimeoutMs: 5_000, poolSize: 4, namedStatements: true });
  const db = dbInstance.db;
  try {
    const { claimMs, releaseMs } = await claimReleaseLatency(db, agent("scale"), {});
    const summaryMs: number[] = [];
    for (let i = 0; i < 5; i++) await summary(db, EVERY_PROJECT);
    // Apart from the claims: at 100k items a summary is a scan that would evict their cache lines.
    for (let i = 0; i < Math.max(10, config.samples / 3); i++) {
      const t = performance.now();
      await summary(db, EVERY_PROJECT);
      summaryMs.push(performance.now() - t);
    }
    const dashboardP50 = await dashboardReads(db);
    return {
      dashboardP50,
      openItems: graph.open,
      leased: graph.leased,
      claimP50: percentile(claimMs, 50), claimP99: percentile(claimMs, 99),
      releaseP50: percentile(releaseMs, 50), releaseP99: percentile(releaseMs, 99),
      summaryP50: percentile(summaryMs, 50), summaryP99: percentile(summaryMs, 99),
    };
  } finally {
    await dbInstance.close();
  }
}

/** Next-claim then release, one after the other, config.samples times after a warm-up (connection, prepared statements, caches). */
async function claimReleaseLatency(db: Db, caller: Caller, route: Pick<ClaimInput, "projectId" | "capabilities">) {
  const claimMs: number[] = [];
  const releaseMs: number[] = [];
  for (let i = 0; i < 5 + config.samples; i++) {
    let t = performance.now();
    const claimed = await claim(db, caller, caller.workerId!, { durationSeconds: 300, ...route });
    if (i >= 5) claimMs.push(performance.now() - t);
    if (!claimed) throw new Error(`scale: nothing ready to claim for ${JSON.stringify(route)}`);
    t = performance.now();
    await release(db, caller, { leaseId: claimed.lease.id, epoch: claimed.lease.epoch, evidence: "bench" });
    if (i >= 5) releaseMs.push(performance.now() - t);
  }
  return { claimMs, releaseMs };
}

interface StatementsResult {
  mode: "named" | "unnamed";
  openItems: number;
  claimP50: number;
  releaseP50: number;
  cycleP50: number;
  /** Service-layer claim→release cycles/s at STATEMENTS_WORKERS workers. */
  perSecond: number | null;
}

const STATEMENTS_WORKERS = 16;

/**
 * What pooler safety costs (issue 26): the claim→release cycle with named prepared statements
 * (the embedded database, or WORK_GRAPH_DB_PREPARED_STATEMENTS=named) and unnamed ones (the
 * default for DATABASE_URL), in the same run on the same graph, alternating the two modes.
 */
async function statementsCost(url: string, n: number, throughputUrl: () => Promise<string>): Promise<StatementsResult[]> {
  const graph = await buildGraph(url, n);
  const rounds = smoke ? 1 : 3;
  const samples: Record<"named" | "unnamed", { claim: number[]; release: number[]; cycle: number[]; rates: number[] }> = {
    named: { claim: [], release: [], cycle: [], rates: [] },
    unnamed: { claim: [], release: [], cycle: [], rates: [] },
  };
  for (let round = 0; round < rounds; round++) {
    for (const mode of ["named", "unnamed"] as const) {
      const dbInstance = createInstance({ databaseUrl: url, connectTimeoutMs: 5_000, poolSize: 4, namedStatements: mode === "named" });
      const db = dbInstance.db;
      try {
        const { claimMs, releaseMs } = await claimReleaseLatency(db, agent(`statements-${mode}`), {});
        samples[mode].claim.push(...claimMs);
        samples[mode].release.push(...releaseMs);
        samples[mode].cycle.push(...claimMs.map((ms, i) => ms + releaseMs[i]!));
      } finally {
        await dbInstance.close();
      }
      const rate = (await serviceThroughput(await throughputUrl(), STATEMENTS_WORKERS, mode === "named")).perSecond;
      if (rate !== null) samples[mode].rates.push(rate);
    }
  }
  return (["named", "unnamed"] as const).map((mode) => ({
    mode,
    openItems: graph.open,
    claimP50: percentile(samples[mode].claim, 50),
    releaseP50: percentile(samples[mode].release, 50),
    cycleP50: percentile(samples[mode].cycle, 50),
    perSecond: samples[mode].rates.length ? median(samples[mode].rates) : null,
  }));
}

interface RoutedScaleResult {
  openItems: number;
  route: string;
  claimP50: number;
  claimP99: number;
  releaseP50: number;
}

/**
 * The scale graph with queue policy (bench/support.ts ROUTING): next-claim latency for a
 * worker with half the capabilities, across every project and within one, against the same
 * graph's unrouted claim.
 */
async function routedScale(url: string, n: number): Promise<RoutedScaleResult[]> {
  const graph = await buildGraph(url, n, { routed: true });
  const half = Array.from({ length: ROUTING.capabilities / 2 }, (_, i) => `cap-${i}`);
  const routes: { route: string; input: Pick<ClaimInput, "projectId" | "capabilities">; capabilities: string[] }[] = [
    { route: "no capabilities (items requiring none), every project", input: {}, capabilities: [] },
    { route: `${half.length} of ${ROUTING.capabilities} capabilities, every project`, input: { capabilities: half }, capabilities: half },
    { route: `${half.length} of ${ROUTING.capabilities} capabilities, one of ${ROUTING.projects} projects`, input: { capabilities: half, projectId: "p1" }, capabilities: half },
  ];
  const dbInstance = createInstance({ databaseUrl: url, connectTimeoutMs: 5_000, poolSize: 4, namedStatements: true });
  const db = dbInstance.db;
  try {
    const results: RoutedScaleResult[] = [];
    for (const { route, input, capabilities } of routes) {
      const { claimMs, releaseMs } = await claimReleaseLatency(db, { ...agent("routed"), capabilities }, input);
      results.push({ openItems: graph.open, route, claimP50: percentile(claimMs, 50), claimP99: percentile(claimMs, 99), releaseP50: percentile(releaseMs, 50) });
    }
    return results;
  } finally {
    await dbInstance.close();
  }
}

/** Every read the dashboard's pages make (as their components call them), p50 over the samples. */
async function dashboardReads(db: Db): Promise<Record<string, number>> {
  const [busiest] = await db.$queryRaw<{ id: string }[]>`SELECT work_item_id AS id FROM events GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`;
  const itemId = busiest?.id ?? "ready-1";
  const reads: Record<string, () => Promise<unknown>> = {
    "workItems.list (page 1)": () => listWorkItems(db, EVERY_PROJECT, { limit: 50 }),
    "workItems.list (stage=blocked)": () => listWorkItems(db, EVERY_PROJECT, { stage: "blocked", limit: 50 }),
    "workItems.queue": () => queue(db, { role: "operator", workerId: null, projects: [], capabilities: [] }, { workerId: null, limit: 20 }),
    "leases.active": () => activeLeases(db, EVERY_PROJECT, { limit: 200 }),
    "dashboard.inbox (open)": () => attentionInbox(db, EVERY_PROJECT, { status: "open", limit: 100 }),
    "dashboard.inbox (resolved)": () => attentionInbox(db, EVERY_PROJECT, { status: "resolved", limit: 100 }),
    "dashboard.neighbourhood": () => itemNeighbourhood(db, EVERY_PROJECT, itemId),
    "notes.list (newest)": () => listNotes(db, EVERY_PROJECT, { workItemId: itemId, limit: 50, order: "desc" }),
    "events.list (item, newest)": () => listEvents(db, EVERY_PROJECT, { workItemId: itemId, order: "desc", limit: 50 }),
    "events.list (item, tail)": () => listEvents(db, EVERY_PROJECT, { workItemId: itemId, limit: 100 }),
  };
  const result: Record<string, number> = {};
  for (const [name, read] of Object.entries(reads)) {
    await read(); // warm-up
    const ms: number[] = [];
    for (let i = 0; i < Math.max(10, config.samples / 10); i++) {
      const t = performance.now();
      await read();
      ms.push(performance.now() - t);
    }
    result[name] = percentile(ms, 50);
  }
  return result;
}

interface CascadeResult {
  descendants: number;
  ms: number;
  cancelled: number;
}

/**
 * Operator cancel of an item with `n` open descendants (100 children, the rest grandchildren,
 * one child released with its subtree still open): one set-based transaction.
 */
async function cascade(url: string, n: number): Promise<CascadeResult> {
  const children = 100;
  const grandchildren = n + 1 - children; // one child is released: n stay open
  await sql(url, `
    INSERT INTO work_items (id, title, open_child_count) VALUES ('cascade-root', 'cascade root', ${children});
    INSERT INTO work_items (id, title, parent_id, open_child_count)
      SELECT 'cascade-c' || c, 'child', 'cascade-root', ${grandchildren} / ${children} + (CASE WHEN c <= ${grandchildren} % ${children} THEN 1 ELSE 0 END)
        FROM generate_series(1, ${children}) c;
    INSERT INTO work_items (id, title, parent_id)
      SELECT 'cascade-g' || g, 'grandchild', 'cascade-c' || (1 + (g - 1) % ${children}) FROM generate_series(1, ${grandchildren}) g;
    UPDATE work_items SET status = 'released' WHERE id = 'cascade-c1';
    UPDATE work_items SET open_child_count = open_child_count - 1 WHERE id = 'cascade-root';
    ANALYZE work_items;`);
  const dbInstance = createInstance({ databaseUrl: url, connectTimeoutMs: 5_000, poolSize: 2, namedStatements: true });
  const db = dbInstance.db;
  try {
    const operator = { tokenId: "bench-operator", role: "operator" as const, workerId: null, actor: "operator:bench", projects: [], capabilities: [] };
    const started = performance.now();
    await cancelWorkItem(db, operator, { id: "cascade-root", reason: "bench" });
    const ms = performance.now() - started;
    const { rows } = await sql(url, "SELECT count(*)::int AS n FROM work_items WHERE id LIKE 'cascade-%' AND status = 'cancelled'");
    return { descendants: n, ms, cancelled: rows[0].n };
  } finally {
    await dbInstance.close();
  }
}

interface FanoutResult {
  dependents: number;
  releaseMs: number;
  runs: number[];
  /** Dependents whose stage is `ready` right after the release committed (all of them, each run). */
  readyAfter: number;
  /** …and that a next-claim can take (they are in the claim index). */
  claimableAfter: number;
}

/**
 * Releasing a blocker that `dependents` items depend on (in a graph of 10k other items): the
 * release's own latency, then a check that every dependent is ready, through the same stage
 * rule the API reports and the same predicate a claim uses.
 */
async function fanout(url: string): Promise<FanoutResult> {
  await buildGraph(url, smoke ? 1_000 : 10_000);
  const dbInstance = createInstance({ databaseUrl: url, connectTimeoutMs: 5_000, poolSize: 2, namedStatements: true });
  const db = dbInstance.db;
  const caller = agent("fanout");
  const runs: number[] = [];
  let readyAfter = Infinity;
  let claimableAfter = Infinity;
  try {
    for (let b = 0; b < config.blockers; b++) {
      await sql(url, `INSERT INTO work_items (id, title, priority) VALUES ('blocker-${b}', 'blocker', 100);
        INSERT INTO work_items (id, title, open_dependency_count) SELECT 'dep-${b}-' || g, 'dependent', 1 FROM generate_series(1, ${config.dependents}) g;
        INSERT INTO dependencies (work_item_id, depends_on_id) SELECT 'dep-${b}-' || g, 'blocker-${b}' FROM generate_series(1, ${config.dependents}) g;
        ANALYZE work_items; ANALYZE dependencies;`);
      const claimed = await claim(db, caller, "fanout", { workItemId: `blocker-${b}`, durationSeconds: 300 });
      const started = performance.now();
      await release(db, caller, { leaseId: claimed!.lease.id, epoch: claimed!.lease.epoch, evidence: "bench" });
      runs.push(performance.now() - started);
      const { rows } = await sql(url, `
        SELECT count(*) FILTER (WHERE ${stageSql} = 'ready')::int AS ready,
               count(*) FILTER (WHERE status = 'open' AND open_dependency_count = 0 AND ancestor_dependency_count = 0
                                  AND open_child_count = 0 AND blocking_attention_count = 0 AND lease_expires_at IS NULL)::int AS claimable
          FROM work_items w WHERE id LIKE 'dep-${b}-%'`);
      readyAfter = Math.min(readyAfter, rows[0].ready);
      claimableAfter = Math.min(claimableAfter, rows[0].claimable);
    }
  } finally {
    await dbInstance.close();
  }
  return { dependents: config.dependents, releaseMs: median(runs), runs, readyAfter, claimableAfter };
}

// STAGE_SQL of server/domain/views.ts, as plain text for the bare client.
const stageSql = `CASE WHEN w.status <> 'open' THEN w.status WHEN w.blocking_attention_count > 0 THEN 'needs_attention'
  WHEN w.lease_expires_at > work_graph_now() THEN 'leased' WHEN w.open_child_count > 0 THEN 'waiting_on_children'
  WHEN w.open_dependency_count > 0 OR w.ancestor_dependency_count > 0 THEN 'blocked' ELSE 'ready' END`;

async function machineFacts(adminUrl: string, settings: string) {
  const { rows } = await sql(adminUrl, "SELECT version() AS version");
  return {
    date: new Date().toISOString(),
    mode: smoke ? "smoke" : "full",
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
    node: process.version,
    postgres: String(rows[0].version).split(",")[0],
    postgresSettings: settings,
    server: process.env.BENCH_DATABASE_URL ? "BENCH_DATABASE_URL" : "embedded (server/database/embedded.ts, durable: true)",
  };
}

/** Contenders' packages (bench/package.json): installed on first use; skipped with a message if that fails. */
function ensureContenderDependencies(): string | null {
  const installed = () => ["graphile-worker", "pg-boss"].every((name) => existsSync(path.join(benchDir, "node_modules", name, "package.json")));
  if (installed()) return null;
  log("installing the contenders (npm ci --prefix bench)…");
  try {
    execFileSync("npm", ["ci", "--prefix", benchDir, "--no-audit", "--no-fund"], { stdio: "inherit" });
    return installed() ? null : "npm ci --prefix bench did not install graphile-worker and pg-boss";
  } catch (error) {
    return `npm ci --prefix bench failed: ${(error as Error).message.split("\n")[0]}`;
  }
}

async function main() {
  const missing = ensureContenderDependencies();
  if (missing) log(`contenders skipped: ${missing}`);
  const server = await startServer();
  postmasterPid = server.postmasterPid;
  const startedAt = performance.now();
  try {
    const facts = await machineFacts(server.adminUrl, server.settings);
    log(`${facts.postgres}; ${facts.cpus} cores; load ${facts.loadAverageAtStart.join(" ")}; ${facts.mode} run`);
    const template = "bench_template";
    await migrateDeploy(await createDatabase(server.adminUrl, template));

    const throughput = {} as Record<Row, Record<number, Measurement>>;
    for (const row of [...OURS, ...CONTENDERS]) throughput[row] = {};
    for (const workers of config.workers) {
      const fresh = async (name: string, withSchema = true) => createDatabase(server.adminUrl, name, withSchema ? template : undefined);
      if (parts.has("service")) throughput["Work Graph, service layer"][workers] = await serviceThroughput(await fresh("bench_service"), workers);
      if (parts.has("http")) throughput["Work Graph, tRPC over HTTP"][workers] = await httpThroughput(await fresh("bench_http"), workers, "handler");
      if (parts.has("server")) throughput["Work Graph, npm start server"][workers] = await httpThroughput(await fresh("bench_server"), workers, "npm start");
      if (parts.has("cluster")) throughput["Work Graph, 2 npm start servers"][workers] = await httpThroughput(await fresh("bench_cluster"), workers, "2 npm start");
      if (parts.has("floor")) throughput["raw-SQL floor"][workers] = await floorThroughput(await fresh("bench_floor", false), workers);
      for (const contender of parts.has("contenders") ? CONTENDERS : []) {
        if (missing) {
          throughput[contender][workers] = { perSecond: null, cpu: null, note: `skipped: ${missing}` };
          continue;
        }
        const url = await fresh("bench_contender", false);
        // Size each run to last about as long as our windows: a calibration run first.
        const calibration = await runContender(contender, url, workers, Math.max(200, workers * 20), 1, postmasterPid);
        const jobs = Math.round(Math.min(50_000, Math.max(500, (calibration.jobsPerSecond ?? 100) * config.contenderSeconds)));
        const result = await runContender(contender, url, workers, jobs, config.runs, postmasterPid);
        throughput[contender][workers] = { perSecond: result.jobsPerSecond, cpu: result.cpu, note: result.note };
        if (result.note) log(`${contender}: ${result.note}`);
      }
      for (const name of ["bench_service", "bench_http", "bench_server", "bench_floor", "bench_contender"]) await dropDatabase(server.adminUrl, name);
      log(`${workers} workers: ${Object.entries(throughput).map(([k, v]) => `${k} ${v[workers]?.perSecond?.toFixed(0) ?? "—"}`).join(" · ")}`);
    }

    const scales: ScaleResult[] = [];
    for (const n of parts.has("scale") ? config.scales : []) {
      const url = await createDatabase(server.adminUrl, "bench_scale", template);
      scales.push(await scale(url, n));
      await dropDatabase(server.adminUrl, "bench_scale");
      const s = scales.at(-1)!;
      log(`scale ${s.openItems} open: claim p50 ${s.claimP50.toFixed(2)} ms, release p50 ${s.releaseP50.toFixed(2)} ms, summary p50 ${s.summaryP50.toFixed(2)} ms`);
      log(`scale ${s.openItems} open, dashboard reads p50: ${Object.entries(s.dashboardP50).map(([k, v]) => `${k} ${v.toFixed(2)} ms`).join(", ")}`);
    }
    const routed: RoutedScaleResult[] = [];
    if (parts.has("routing")) {
      // At least 10,000 items: smaller graphs run out of one project's routable items within the samples.
      const n = Math.max(config.scales.at(-1)!, 10_000);
      const url = await createDatabase(server.adminUrl, "bench_routed", template);
      routed.push(...(await routedScale(url, n)));
      await dropDatabase(server.adminUrl, "bench_routed");
      for (const r of routed) log(`routed scale ${r.openItems} open, ${r.route}: claim p50 ${r.claimP50.toFixed(2)} ms, p99 ${r.claimP99.toFixed(2)} ms`);
    }
    let cascaded: CascadeResult | null = null;
    if (parts.has("scale")) {
      const url = await createDatabase(server.adminUrl, "bench_cascade", template);
      cascaded = await cascade(url, config.cascade);
      await dropDatabase(server.adminUrl, "bench_cascade");
      log(`cancel with ${cascaded.descendants} open descendants: ${cascaded.ms.toFixed(0)} ms (${cascaded.cancelled} cancelled)`);
    }
    let statements: StatementsResult[] | null = null;
    if (parts.has("statements")) {
      const url = await createDatabase(server.adminUrl, "bench_statements", template);
      statements = await statementsCost(url, smoke ? 1_000 : 10_000, () => createDatabase(server.adminUrl, "bench_statements_rate", template));
      await dropDatabase(server.adminUrl, "bench_statements");
      await dropDatabase(server.adminUrl, "bench_statements_rate");
      for (const row of statements) {
        log(`${row.mode} statements: claim p50 ${row.claimP50.toFixed(2)} ms, release p50 ${row.releaseP50.toFixed(2)} ms, cycle p50 ${row.cycleP50.toFixed(2)} ms, ${row.perSecond?.toFixed(0) ?? "?"} cycles/s at ${STATEMENTS_WORKERS} workers`);
      }
    }
    let fan: FanoutResult | null = null;
    if (parts.has("fanout")) {
      fan = await fanout(await createDatabase(server.adminUrl, "bench_fanout", template));
      await dropDatabase(server.adminUrl, "bench_fanout");
      log(`release of a blocker with ${fan.dependents} dependents: ${fan.releaseMs.toFixed(1)} ms (${fan.readyAfter} ready)`);
    }
    let webhooks: WebhookLatencyResult | null = null;
    if (parts.has("webhooks")) {
      webhooks = await webhookLatency(await createDatabase(server.adminUrl, "bench_webhooks", template), { eventsPerSecond: config.webhookRate, seconds: config.webhookSeconds });
      await dropDatabase(server.adminUrl, "bench_webhooks");
      log(`webhook latency at ${webhooks.achievedPerSecond.toFixed(0)} events/s: p50 ${webhooks.p50Ms.toFixed(0)} ms, p99 ${webhooks.p99Ms.toFixed(0)} ms (${webhooks.delivered}/${webhooks.committed} delivered)`);
    }

    let waiters: WaiterResult | null = null;
    if (parts.has("waiters")) {
      waiters = await waiterBenchmark(await createDatabase(server.adminUrl, "bench_waiters", template), { waiters: config.waiters, singles: config.waiterSingles });
      await dropDatabase(server.adminUrl, "bench_waiters");
      log(`waiting claims: wake-up p50 ${waiters.single.p50.toFixed(1)} ms, p99 ${waiters.single.p99.toFixed(1)} ms`);
    }

    let observed: ObservabilityResult | null = null;
    if (parts.has("observability")) {
      const [items, events] = smoke ? [1_000, 10_000] : [100_000, 1_000_000];
      observed = await observability(await createDatabase(server.adminUrl, "bench_observability", template), items, events, config.samples);
      await dropDatabase(server.adminUrl, "bench_observability");
      log(`scrape p50 ${observed.scrapeUncachedP50.toFixed(2)} ms; activity p50 ${Object.entries(observed.activity).map(([range, v]) => `${range} ${v.p50.toFixed(1)} ms`).join(", ")}`);
    }

    let imported: ImportResult | null = null;
    if (parts.has("import")) {
      imported = await importBenchmark(await createDatabase(server.adminUrl, "bench_import", template), smoke ? { items: 100, dependencies: 150, runs: 1 } : { items: 1_000, dependencies: 1_500, runs: 5 });
      await dropDatabase(server.adminUrl, "bench_import");
    }

    const report = {
      facts: { ...facts, loadAverageAtEnd: os.loadavg().map((l) => Math.round(l * 100) / 100), durationSeconds: Math.round((performance.now() - startedAt) / 1000) },
      config,
      throughput,
      scales,
      routed,
      statements,
      cascade: cascaded,
      fanout: fan,
      waiters,
      webhooks,
      observability: observed,
      import: imported,
      targets: targets(throughput, scales, fan, cascaded),
    };
    const markdown = renderMarkdown(report);
    const resultsDir = path.join(benchDir, "results");
    await mkdir(resultsDir, { recursive: true });
    const stamp = `${facts.date.replace(/[:.]/g, "-")}${smoke ? "-smoke" : ""}${flag("only") || flag("workers") || flag("scales") ? "-partial" : ""}`;
    await writeFile(path.join(resultsDir, `${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(path.join(resultsDir, `${stamp}.md`), `${markdown}\n`);
    console.log(`\n${markdown}\n`);
    log(`results in bench/results/${stamp}.{md,json}`);
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
  } finally {
    await server.stop();
  }
}

interface Target {
  target: string;
  measured: string;
  met: boolean | null;
}

function targets(throughput: Record<Row, Record<number, Measurement>>, scales: ScaleResult[], fan: FanoutResult | null, cascaded: CascadeResult | null): Target[] {
  const at = config.workers.includes(16) ? 16 : config.workers.at(-1)!;
  const ours = throughput["Work Graph, service layer"][at]?.perSecond ?? null;
  const ratio = (row: Row) => {
    const theirs = throughput[row][at]?.perSecond ?? null;
    return ours !== null && theirs ? ours / theirs : null;
  };
  const vsGraphile = ratio("graphile-worker (unbatched)");
  const vsFloor = ratio("raw-SQL floor");
  const small = scales[0];
  const large = scales.at(-1);
  const scaleRatio = small && large && small !== large ? large.claimP50 / small.claimP50 : null;
  const show = (value: number | null, digits = 2) => (value === null ? "n/a" : value.toFixed(digits));
  const served = throughput["Work Graph, npm start server"];
  const servedAt = served[at]?.perSecond ?? null;
  const servedMost = config.workers.at(-1)!;
  const servedMostRate = served[servedMost]?.perSecond ?? null;
  const servedOne = served[config.workers[0]!]?.claimP50Ms ?? null;
  const servedFloor = served[config.workers[0]!]?.floorP50Ms ?? null;
  const servedRenew = served[config.workers[0]!]?.renewP50Ms ?? null;
  return [
    { target: `npm start server at ${at} agents ≥ 800 cycles/s`, measured: show(servedAt, 0), met: servedAt === null ? null : servedAt >= 800 },
    {
      target: `npm start server: claim p50 at ${config.workers[0]} agent(s) ≤ 3 ms`,
      measured: servedOne === null ? "n/a" : `${show(servedOne)} ms${servedFloor === null ? "" : ` (HTTP floor, GET /api/health/live: ${show(servedFloor)} ms)`}`,
      met: servedOne === null ? null : servedOne <= 3,
    },
    {
      target: `npm start server: renew p50 at ${config.workers[0]} agent(s) ≤ 2 ms`,
      measured: servedRenew === null ? "n/a (needs 1 agent)" : `${show(servedRenew)} ms`,
      met: servedRenew === null ? null : servedRenew <= 2,
    },
    {
      target: `npm start server at ${servedMost} agents ≥ 0.9 × at ${at}`,
      measured: servedAt && servedMostRate !== null && servedMost !== at ? `${show(servedMostRate / servedAt)} ×` : "n/a",
      met: servedAt && servedMostRate !== null && servedMost !== at ? servedMostRate / servedAt >= 0.9 : null,
    },
    { target: `service layer at ${at} workers ≥ 0.5 × graphile-worker (unbatched)`, measured: vsGraphile === null ? "n/a" : `${show(vsGraphile)} ×`, met: vsGraphile === null ? null : vsGraphile >= 0.5 },
    { target: `service layer at ${at} workers ≥ 0.6 × raw-SQL floor`, measured: vsFloor === null ? "n/a" : `${show(vsFloor)} ×`, met: vsFloor === null ? null : vsFloor >= 0.6 },
    {
      target: `next-claim p50 at ${large?.openItems.toLocaleString("en") ?? "?"} open items ≤ 1.5 × at ${small?.openItems.toLocaleString("en") ?? "?"}`,
      measured: scaleRatio === null ? "n/a (needs two sizes)" : `${show(scaleRatio)} × (${show(large!.claimP50)} vs ${show(small!.claimP50)} ms)`,
      met: scaleRatio === null ? null : scaleRatio <= 1.5,
    },
    {
      target: `releasing a blocker with ${config.dependents.toLocaleString("en")} dependents < 1 s (all become ready)`,
      measured: fan ? `${fan.releaseMs.toFixed(1)} ms, ${fan.readyAfter} ready` : "n/a",
      met: fan ? fan.releaseMs < 1000 && fan.readyAfter === fan.dependents : null,
    },
    {
      target: `dashboard.summary < 100 ms at ${large?.openItems.toLocaleString("en") ?? "?"} open items (p99)`,
      measured: `p50 ${show(large?.summaryP50 ?? null)} ms, p99 ${show(large?.summaryP99 ?? null)} ms`,
      met: large ? large.summaryP99 < 100 : null,
    },
    (() => {
      const slowest = large ? Object.entries(large.dashboardP50).sort((a, b) => b[1] - a[1])[0] : undefined;
      return {
        target: `every dashboard read < 50 ms p50 at ${large?.openItems.toLocaleString("en") ?? "?"} open items`,
        measured: slowest ? `slowest: ${slowest[0]} ${show(slowest[1])} ms` : "n/a",
        met: slowest ? slowest[1] < 50 : null,
      };
    })(),
    {
      target: `cancelling an item with ${config.cascade.toLocaleString("en")} open descendants < 5 s`,
      measured: cascaded ? `${show(cascaded.ms, 0)} ms, ${cascaded.cancelled.toLocaleString("en")} cancelled` : "n/a",
      met: cascaded ? cascaded.ms < 5000 && cascaded.cancelled === cascaded.descendants + 1 : null,
    },
  ];
}

function renderMarkdown(report: {
  facts: Awaited<ReturnType<typeof machineFacts>> & { loadAverageAtEnd: number[]; durationSeconds: number };
  throughput: Record<Row, Record<number, Measurement>>;
  scales: ScaleResult[];
  routed: RoutedScaleResult[];
  statements: StatementsResult[] | null;
  cascade: CascadeResult | null;
  fanout: FanoutResult | null;
  waiters: WaiterResult | null;
  webhooks: WebhookLatencyResult | null;
  observability: ObservabilityResult | null;
  import: ImportResult | null;
  targets: Target[];
}): string {
  const f = report.facts;
  const workers = config.workers;
  const header = (first: string) => [`| ${first} | ${workers.map((w) => `${w} worker${w === 1 ? "" : "s"}`).join(" | ")} |`, `|---|${workers.map(() => "---:").join("|")}|`];
  const rate = (m: Measurement | undefined) => (m?.perSecond === null || m?.perSecond === undefined ? "—" : m.perSecond.toFixed(0));
  const ours = report.throughput["Work Graph, service layer"];
  const http = report.throughput["Work Graph, tRPC over HTTP"];
  const ratio = (mine: Record<number, Measurement>, other: Row) =>
    workers.map((w) => {
      const theirs = report.throughput[other][w]?.perSecond;
      const value = mine[w]?.perSecond;
      return theirs && value ? (value / theirs).toFixed(2) : "—";
    });
  const cpu = (m: Measurement | undefined) =>
    m?.cpu
      ? `${m.cpu.appMs.toFixed(2)} + ${m.cpu.postgresMs === null ? "?" : m.cpu.postgresMs.toFixed(2)}${m.clientCpuMs === undefined ? "" : ` (agents ${m.clientCpuMs.toFixed(2)})`}`
      : "—";
  const lines = [
    `Run ${f.date} (${f.mode}, ${f.durationSeconds} s): ${f.cpus} × ${f.cpuModel}, ${f.memoryGiB} GiB, Node ${f.node}, ${f.postgres}; load average ${f.loadAverageAtStart.join(" / ")} at start, ${f.loadAverageAtEnd.join(" / ")} at end.`,
    `PostgreSQL: ${f.server}; ${f.postgresSettings}.`,
    `Throughput: median of ${config.runs} window(s) of ${config.windowMs} ms per cell (contenders: the same number of runs, each sized to about ${config.contenderSeconds} s, steady-state rate).`,
    "",
    "### Cycle throughput (claim → release/complete, per second)",
    "",
    ...header("cycles/s"),
    ...Object.entries(report.throughput).map(([name, values]) => `| ${name} | ${workers.map((w) => rate(values[w])).join(" | ")} |`),
    ...[...new Set(Object.values(report.throughput).flatMap((values) => Object.values(values).map((m) => m.note)).filter(Boolean))].map((note) => `\nNote: ${note}`),
    "",
    ...header("service layer ÷ contender"),
    ...(["raw-SQL floor", ...CONTENDERS] as Row[]).map((other) => `| ÷ ${other} | ${ratio(ours, other).join(" | ")} |`),
    `| tRPC over HTTP ÷ service layer | ${ratio(http, "Work Graph, service layer").join(" | ")} |`,
    "",
    ...header("claim round trip p50 over HTTP (ms)"),
    ...(["Work Graph, tRPC over HTTP", "Work Graph, npm start server", "Work Graph, 2 npm start servers"] as Row[]).map((name) => `| ${name} | ${workers.map((w) => report.throughput[name][w]?.claimP50Ms?.toFixed(2) ?? "—").join(" | ")} |`),
    `| HTTP floor: GET /api/health/live, npm start server | ${workers.map((w) => report.throughput["Work Graph, npm start server"][w]?.floorP50Ms?.toFixed(2) ?? "—").join(" | ")} |`,
    "",
    ...header("claim round trip p99 over HTTP (ms)"),
    ...(["Work Graph, tRPC over HTTP", "Work Graph, npm start server", "Work Graph, 2 npm start servers"] as Row[]).map((name) => `| ${name} | ${workers.map((w) => report.throughput[name][w]?.claimP99Ms?.toFixed(2) ?? "—").join(" | ")} |`),
    `| heartbeat (leases.renew) p50, npm start server | ${workers.map((w) => report.throughput["Work Graph, npm start server"][w]?.renewP50Ms?.toFixed(2) ?? "—").join(" | ")} |`,
    "",
    ...header("CPU ms per cycle: app process + PostgreSQL"),
    ...Object.entries(report.throughput).map(([name, values]) => `| ${name} | ${workers.map((w) => cpu(values[w])).join(" | ")} |`),
    "",
    "### Scale (one worker; a realistic graph, see BENCHMARKS.md)",
    "",
    "| open items (leased) | next-claim p50 / p99 (ms) | release p50 / p99 (ms) | dashboard.summary p50 / p99 (ms) |",
    "|---:|---:|---:|---:|",
    ...report.scales.map(
      (s) =>
        `| ${s.openItems.toLocaleString("en")} (${s.leased.toLocaleString("en")}) | ${s.claimP50.toFixed(2)} / ${s.claimP99.toFixed(2)} | ${s.releaseP50.toFixed(2)} / ${s.releaseP99.toFixed(2)} | ${s.summaryP50.toFixed(2)} / ${s.summaryP99.toFixed(2)} |`,
    ),
    "",
    ...(report.scales.length > 0
      ? [
          `| dashboard read p50 (ms) | ${report.scales.map((s) => `${s.openItems.toLocaleString("en")} open`).join(" | ")} |`,
          `|---|${report.scales.map(() => "---:").join("|")}|`,
          ...Object.keys(report.scales[0]!.dashboardP50).map((name) => `| ${name} | ${report.scales.map((s) => s.dashboardP50[name]!.toFixed(2)).join(" | ")} |`),
          "",
        ]
      : []),
    ...(report.routed.length > 0
      ? [
          `Queue policy on the largest graph: its items spread over ${ROUTING.projects} projects, a third requiring no capability, a third one and a third two of ${ROUTING.capabilities}, a tenth on one of ${ROUTING.limitedKeys} keys limited to ${ROUTING.maxLeases} live leases (bench/support.ts ROUTING). One worker, next-claim then release:`,
          "",
          "| open items | the claiming worker | next-claim p50 / p99 (ms) | release p50 (ms) | claim p50 vs the unrouted graph |",
          "|---:|---|---:|---:|---:|",
          ...report.routed.map((r) => {
            const plain = report.scales.find((s) => s.openItems === r.openItems);
            return `| ${r.openItems.toLocaleString("en")} | ${r.route} | ${r.claimP50.toFixed(2)} / ${r.claimP99.toFixed(2)} | ${r.releaseP50.toFixed(2)} | ${plain ? `${(r.claimP50 / plain.claimP50).toFixed(2)} ×` : "—"} |`;
          }),
          "",
        ]
      : []),
    report.cascade
      ? `Cancelling an item with ${report.cascade.descendants.toLocaleString("en")} open descendants (one transaction): ${report.cascade.ms.toFixed(0)} ms, ${report.cascade.cancelled.toLocaleString("en")} items cancelled.`
      : "Cancelling a large subtree: not run.",
    "",
    report.fanout
      ? `Releasing a blocker with ${report.fanout.dependents.toLocaleString("en")} dependents: ${report.fanout.releaseMs.toFixed(1)} ms (median of ${report.fanout.runs.length}: ${report.fanout.runs.map((r) => r.toFixed(1)).join(", ")}); ${report.fanout.readyAfter} of them ready and ${report.fanout.claimableAfter} claimable right after the commit.`
      : "Releasing a blocker with many dependents: not run.",
    ...renderWaiters(report.waiters),
    "",
    "### Webhook delivery latency (commit → receiver)",
    "",
    report.webhooks
      ? `${report.webhooks.eventsPerSecond} events/s asked (${report.webhooks.achievedPerSecond.toFixed(0)} achieved) for ${report.webhooks.seconds} s, one webhook, one dispatcher (defaults), local receiver: p50 ${report.webhooks.p50Ms.toFixed(0)} ms, p99 ${report.webhooks.p99Ms.toFixed(0)} ms, max ${report.webhooks.maxMs.toFixed(0)} ms; ${report.webhooks.delivered} of ${report.webhooks.committed} delivered.`
      : "Not run.",
    "",
    ...renderObservability(report.observability),
    ...renderImport(report.import),
    "",
    "### Named and unnamed prepared statements (pooler safety, issue 26)",
    "",
    ...(report.statements
      ? [
          `Same run, modes alternated; latency one worker on ${report.statements[0]!.openItems.toLocaleString("en")} open items, rate the service layer at ${STATEMENTS_WORKERS} workers.`,
          "",
          "| statements | claim p50 (ms) | release p50 (ms) | claim→release p50 (ms) | cycles/s |",
          "|---|---:|---:|---:|---:|",
          ...report.statements.map((row) => `| ${row.mode} | ${row.claimP50.toFixed(2)} | ${row.releaseP50.toFixed(2)} | ${row.cycleP50.toFixed(2)} | ${row.perSecond?.toFixed(0) ?? "—"} |`),
        ]
      : ["Not run."]),
    "",
    "### Targets",
    "",
    "| target | measured | met |",
    "|---|---|---|",
    ...report.targets.map((t) => `| ${t.target} | ${t.measured} | ${t.met === null ? "n/a" : t.met ? "yes" : "**no**"} |`),
  ];
  return lines.join("\n");
}

await main();
