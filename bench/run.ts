/**
 * `npm run bench` — claim throughput, latency and scale, side by side with graphile-worker,
 * pg-boss and a raw-SQL floor, on one PostgreSQL server. `-- --smoke` runs a few seconds of
 * everything (CI); BENCH_DATABASE_URL uses your server instead of an embedded one.
 * Method and latest results: BENCHMARKS.md.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, chmod, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { createTRPCClient, httpLink } from "@trpc/client";
import { createToken } from "../server/auth/tokens";
import { createDb } from "../server/db";
import { startEmbeddedPostgres } from "../server/database/embedded";
import { migrateDeploy } from "../server/database/migrate";
import type { Caller } from "../server/domain/types";
import { claim } from "../server/operations/claim";
import { release } from "../server/operations/finish";
import { summary } from "../server/queries/dashboard";
import type { AppRouter } from "../server/trpc/root";
import { startTestServer } from "../tests/support/app";
import { runContender, type ContenderResult } from "./contenders";

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const smoke = process.argv.includes("--smoke");
const config = smoke
  ? { windowMs: 400, runs: 1, workers: [1, 4], scales: [1_000], samples: 20, dependents: 100, contenderJobs: 200 }
  : { windowMs: 3_000, runs: 3, workers: [1, 4, 16, 64], scales: [1_000, 10_000, 100_000], samples: 300, dependents: 1_000, contenderJobs: 6_000 };

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
const log = (message: string) => console.log(`[bench] ${message}`);
const agent = (workerId: string): Caller => ({ tokenId: `bench-${workerId}`, role: "agent", workerId, actor: workerId });

async function createDatabase(adminUrl: string, name: string, template?: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
  await client.end();
  return adminUrl.replace(/\/[^/]+$/, `/${name}`);
}

async function insertReady(url: string, prefix: string, count: number) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`INSERT INTO work_items (id, title) SELECT $1 || g, 'bench item' FROM generate_series(1, $2) g`, [prefix, count]);
  await client.query("ANALYZE work_items");
  await client.end();
}

/** Runs `workers` loops of `cycle` for the window; returns completed cycles per second. */
async function timedLoops(workers: number, windowMs: number, cycle: (worker: number) => Promise<boolean>): Promise<number> {
  let done = 0;
  const started = performance.now();
  const deadline = started + windowMs;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (performance.now() < deadline) {
        if (!(await cycle(worker))) return;
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

async function serviceThroughput(url: string, workers: number): Promise<number> {
  const db = createDb(url, { poolSize: Math.max(workers, 4) });
  const results: number[] = [];
  for (let run = 0; run < config.runs; run++) {
    await insertReady(url, `svc-${workers}-${run}-`, Math.ceil(workers * 40 + config.windowMs * 3));
    results.push(
      await timedLoops(workers, config.windowMs, async (worker) => {
        const caller = agent(`svc-${worker}`);
        const claimed = await claim(db, caller, caller.workerId!, { durationSeconds: 300 });
        if (!claimed) return false;
        await release(db, caller, { leaseId: claimed.lease.id, epoch: claimed.lease.epoch, evidence: "bench" });
        return true;
      }),
    );
  }
  await db.$disconnect();
  return median(results);
}

async function httpThroughput(url: string, workers: number): Promise<number> {
  const db = createDb(url, { poolSize: Math.max(workers, 4) });
  const server = await startTestServer(db);
  const clients = await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      const { token } = await createToken(db, { role: "agent", workerId: `http-${worker}`, label: "bench" });
      return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${server.url}/api/trpc`, headers: { authorization: `Bearer ${token}` } })] });
    }),
  );
  const results: number[] = [];
  for (let run = 0; run < config.runs; run++) {
    await insertReady(url, `http-${workers}-${run}-`, Math.ceil(workers * 40 + config.windowMs * 2));
    results.push(
      await timedLoops(workers, config.windowMs, async (worker) => {
        const claimed = await clients[worker]!.leases.claim.mutate({ durationSeconds: 300 });
        if (!claimed) return false;
        await clients[worker]!.leases.release.mutate({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, evidence: "bench" });
        return true;
      }),
    );
  }
  await server.close();
  await db.$disconnect();
  return median(results);
}

/** The least work one claim + complete can do: SKIP LOCKED claim, then an UPDATE; two commits per item. */
async function floorThroughput(url: string, workers: number): Promise<number> {
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query(`CREATE TABLE IF NOT EXISTS floor_jobs (id bigserial PRIMARY KEY, claimed_at timestamptz, done boolean NOT NULL DEFAULT false);
    CREATE INDEX IF NOT EXISTS floor_jobs_todo ON floor_jobs (id) WHERE claimed_at IS NULL`);
  const pool = new pg.Pool({ connectionString: url, max: Math.max(workers, 4) });
  const results: number[] = [];
  for (let run = 0; run < config.runs; run++) {
    await setup.query("INSERT INTO floor_jobs (done) SELECT false FROM generate_series(1, $1)", [workers * 40 + config.windowMs * 5]);
    results.push(
      await timedLoops(workers, config.windowMs, async () => {
        const { rows } = await pool.query(`UPDATE floor_jobs SET claimed_at = now() WHERE id = (
          SELECT id FROM floor_jobs WHERE claimed_at IS NULL ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id`);
        if (rows.length === 0) return false;
        await pool.query("UPDATE floor_jobs SET done = true WHERE id = $1", [rows[0].id]);
        return true;
      }),
    );
  }
  await pool.end();
  await setup.end();
  return median(results);
}

/** A realistic graph of `n` items: ready, blocked by dependencies, waiting on children, leased, finished. */
async function buildGraph(url: string, n: number) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const parents = Math.floor(n * 0.05);
  await client.query(`
    INSERT INTO work_items (id, title, priority, open_child_count)
      SELECT 'parent-' || g, 'parent', (g % 10), 3 FROM generate_series(1, ${parents}) g;
    INSERT INTO work_items (id, title, parent_id, priority)
      SELECT 'child-' || g, 'child', 'parent-' || (1 + (g - 1) / 3), (g % 10) FROM generate_series(1, ${parents * 3}) g;
    INSERT INTO work_items (id, title, priority)
      SELECT 'ready-' || g, 'ready', (g % 10) FROM generate_series(1, ${Math.floor(n * 0.25)}) g;
    INSERT INTO work_items (id, title, priority, open_dependency_count)
      SELECT 'blocked-' || g, 'blocked', (g % 10), 1 FROM generate_series(1, ${Math.floor(n * 0.25)}) g;
    INSERT INTO dependencies (work_item_id, depends_on_id)
      SELECT 'blocked-' || g, 'parent-' || (1 + g % ${Math.max(parents, 1)}) FROM generate_series(1, ${Math.floor(n * 0.25)}) g;
    INSERT INTO work_items (id, title, status)
      SELECT 'done-' || g, 'finished', 'released' FROM generate_series(1, ${Math.floor(n * 0.2)}) g;
    INSERT INTO work_items (id, title, priority) SELECT 'leased-' || g, 'leased', 9 FROM generate_series(1, ${Math.floor(n * 0.1)}) g;
    WITH l AS (
      INSERT INTO leases (work_item_id, worker_id, epoch, acquired_at, expires_at)
      SELECT 'leased-' || g, 'holder-' || (g % 50), 1, now(), now() + interval '1 day' FROM generate_series(1, ${Math.floor(n * 0.1)}) g
      RETURNING id, work_item_id, expires_at)
    UPDATE work_items w SET current_lease_id = l.id, lease_expires_at = l.expires_at, last_epoch = 1 FROM l WHERE w.id = l.work_item_id;
    ANALYZE;`);
  await client.end();
}

async function scale(adminUrl: string, n: number) {
  const url = await createDatabase(adminUrl, `bench_scale_${n}`, "bench_template");
  await buildGraph(url, n);
  const db = createDb(url, { poolSize: 4 });
  const caller = agent("scale");
  const claimMs: number[] = [];
  const releaseMs: number[] = [];
  const summaryMs: number[] = [];
  for (let i = 0; i < config.samples; i++) {
    let t = performance.now();
    const claimed = await claim(db, caller, "scale", { durationSeconds: 300 });
    claimMs.push(performance.now() - t);
    t = performance.now();
    await release(db, caller, { leaseId: claimed!.lease.id, epoch: claimed!.lease.epoch, evidence: "bench" });
    releaseMs.push(performance.now() - t);
    if (i % 3 === 0) {
      t = performance.now();
      await summary(db);
      summaryMs.push(performance.now() - t);
    }
  }
  await db.$disconnect();
  return {
    items: n,
    claimP50: percentile(claimMs, 50), claimP99: percentile(claimMs, 99),
    releaseP50: percentile(releaseMs, 50), releaseP99: percentile(releaseMs, 99),
    summaryP50: percentile(summaryMs, 50), summaryP99: percentile(summaryMs, 99),
  };
}

async function releaseWideBlocker(adminUrl: string) {
  const url = await createDatabase(adminUrl, "bench_fanout", "bench_template");
  const db = createDb(url, { poolSize: 4 });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`INSERT INTO work_items (id, title) VALUES ('blocker', 'blocker');
    INSERT INTO work_items (id, title, open_dependency_count) SELECT 'dependent-' || g, 'dependent', 1 FROM generate_series(1, ${config.dependents}) g;
    INSERT INTO dependencies (work_item_id, depends_on_id) SELECT 'dependent-' || g, 'blocker' FROM generate_series(1, ${config.dependents}) g;
    ANALYZE;`);
  const caller = agent("fanout");
  const claimed = await claim(db, caller, "fanout", { workItemId: "blocker", durationSeconds: 300 });
  const started = performance.now();
  await release(db, caller, { leaseId: claimed!.lease.id, epoch: claimed!.lease.epoch, evidence: "bench" });
  const ms = performance.now() - started;
  const { rows } = await client.query(`SELECT count(*)::int AS ready FROM work_items WHERE id LIKE 'dependent-%' AND open_dependency_count = 0`);
  await client.end();
  await db.$disconnect();
  return { dependents: config.dependents, releaseMs: ms, readyAfter: rows[0].ready as number };
}

async function machineFacts(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query("SELECT version() AS version, current_setting('synchronous_commit') AS sync, current_setting('shared_buffers') AS buffers");
  await client.end();
  return {
    date: new Date().toISOString(),
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    postgres: String(rows[0].version).split(",")[0],
    postgresSettings: `synchronous_commit=${rows[0].sync}, shared_buffers=${rows[0].buffers}, fsync on`,
    mode: smoke ? "smoke" : "full",
  };
}

function ensureContenderDependencies() {
  if (existsSync(path.join(benchDir, "node_modules", "graphile-worker"))) return;
  log("installing contenders (npm ci --prefix bench)…");
  execFileSync("npm", ["ci", "--prefix", benchDir, "--no-audit", "--no-fund"], { stdio: "inherit" });
}

async function main() {
  ensureContenderDependencies();
  let adminUrl = process.env.BENCH_DATABASE_URL;
  let stop = async () => {};
  if (!adminUrl) {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "work-graph-bench-"));
    await chmod(dataDir, 0o755);
    const server = await startEmbeddedPostgres({ dataDir: path.join(dataDir, "pg"), databaseName: "postgres", durable: true });
    adminUrl = server.adminUrl;
    stop = () => server.stop();
  }
  try {
    const facts = await machineFacts(adminUrl);
    log(`${facts.postgres}; ${facts.cpus} cores; ${facts.mode} run`);
    const templateUrl = await createDatabase(adminUrl, "bench_template");
    await migrateDeploy(templateUrl);

    const throughput: Record<string, Record<number, number | null>> = {
      "Work Graph, service layer": {}, "Work Graph, tRPC over HTTP": {}, "raw-SQL floor": {},
      "graphile-worker (unbatched)": {}, "graphile-worker (batched)": {}, "pg-boss": {},
    };
    for (const workers of config.workers) {
      const appUrl = await createDatabase(adminUrl, `bench_app_${workers}`, "bench_template");
      throughput["Work Graph, service layer"]![workers] = await serviceThroughput(appUrl, workers);
      throughput["Work Graph, tRPC over HTTP"]![workers] = await httpThroughput(appUrl, workers);
      throughput["raw-SQL floor"]![workers] = await floorThroughput(await createDatabase(adminUrl, `bench_floor_${workers}`), workers);
      for (const contender of ["graphile-worker (unbatched)", "graphile-worker (batched)", "pg-boss"] as const) {
        const result: ContenderResult = await runContender(contender, await createDatabase(adminUrl, `bench_c_${workers}`), workers, config.contenderJobs, config.runs);
        throughput[contender]![workers] = result.jobsPerSecond;
        if (result.note) log(`${contender}: ${result.note}`);
      }
      log(`${workers} workers: ${Object.entries(throughput).map(([k, v]) => `${k} ${v[workers]?.toFixed(0) ?? "—"}`).join(" · ")}`);
    }
    const scales = [];
    for (const n of config.scales) {
      scales.push(await scale(adminUrl, n));
      log(`scale ${n}: claim p50 ${scales.at(-1)!.claimP50.toFixed(2)} ms`);
    }
    const fanout = await releaseWideBlocker(adminUrl);
    log(`release of a blocker with ${fanout.dependents} dependents: ${fanout.releaseMs.toFixed(1)} ms (${fanout.readyAfter} ready)`);

    const report = { facts, config, throughput, scales, fanout };
    const markdown = renderMarkdown(report);
    const resultsDir = path.join(benchDir, "results");
    await mkdir(resultsDir, { recursive: true });
    const stamp = facts.date.replace(/[:.]/g, "-");
    await writeFile(path.join(resultsDir, `${stamp}.json`), JSON.stringify(report, null, 2));
    await writeFile(path.join(resultsDir, `${stamp}.md`), markdown);
    console.log(`\n${markdown}`);
    log(`results in bench/results/${stamp}.{md,json}`);
  } finally {
    await stop();
  }
}

function renderMarkdown(report: {
  facts: Awaited<ReturnType<typeof machineFacts>>;
  throughput: Record<string, Record<number, number | null>>;
  scales: Awaited<ReturnType<typeof scale>>[];
  fanout: Awaited<ReturnType<typeof releaseWideBlocker>>;
}): string {
  const f = report.facts;
  const workers = config.workers;
  const rate = (v: number | null | undefined) => (v === null || v === undefined ? "—" : v.toFixed(0));
  const lines = [
    `Run ${f.date} (${f.mode}): ${f.cpus} × ${f.cpuModel}, ${f.memoryGiB} GiB, Node ${f.node}, ${f.postgres} (${f.postgresSettings}). Medians of ${config.runs} run(s) of ${config.windowMs} ms.`,
    "",
    `| cycles/s (claim → complete) | ${workers.map((w) => `${w} workers`).join(" | ")} |`,
    `|---|${workers.map(() => "---:").join("|")}|`,
    ...Object.entries(report.throughput).map(([name, values]) => `| ${name} | ${workers.map((w) => rate(values[w])).join(" | ")} |`),
  ];
  const ours = report.throughput["Work Graph, service layer"]!;
  const ratio = (other: string) =>
    workers.map((w) => {
      const theirs = report.throughput[other]![w];
      return theirs ? (ours[w]! / theirs).toFixed(2) : "—";
    });
  lines.push(
    "",
    `| service layer ÷ contender | ${workers.map((w) => `${w} workers`).join(" | ")} |`,
    `|---|${workers.map(() => "---:").join("|")}|`,
    `| ÷ raw-SQL floor | ${ratio("raw-SQL floor").join(" | ")} |`,
    `| ÷ graphile-worker (unbatched) | ${ratio("graphile-worker (unbatched)").join(" | ")} |`,
    `| ÷ graphile-worker (batched) | ${ratio("graphile-worker (batched)").join(" | ")} |`,
    `| ÷ pg-boss | ${ratio("pg-boss").join(" | ")} |`,
    "",
    "| open items in graph | next-claim p50 / p99 (ms) | release p50 / p99 (ms) | dashboard.summary p50 / p99 (ms) |",
    "|---:|---:|---:|---:|",
    ...report.scales.map(
      (s) => `| ${s.items.toLocaleString("en")} | ${s.claimP50.toFixed(2)} / ${s.claimP99.toFixed(2)} | ${s.releaseP50.toFixed(2)} / ${s.releaseP99.toFixed(2)} | ${s.summaryP50.toFixed(2)} / ${s.summaryP99.toFixed(2)} |`,
    ),
    "",
    `Releasing a blocker with ${report.fanout.dependents} dependents: ${report.fanout.releaseMs.toFixed(1)} ms; ${report.fanout.readyAfter} of them ready at commit.`,
  );
  return lines.join("\n");
}

await main();
