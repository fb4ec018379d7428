/**
 * `npx tsx bench/profile.ts [--quick]` — where a claim → release cycle spends its time.
 *
 *   1. The statements (round trips) one service-layer claim and one release send, captured at
 *      the pg driver under Prisma.
 *   2. Per-operation latency at 1 worker, and CPU per cycle at 16 workers (this process vs. the
 *      PostgreSQL server; on 2 cores CPU per cycle is what bounds throughput), for the same SQL
 *      sent several ways: through the service layer (Prisma); replayed on a bare pg pool with
 *      the same prepared statements and round trips (the difference is Prisma's own cost); the
 *      same with generic plans forced and any BEGIN/COMMIT around a lone statement dropped; and
 *      as one simple-protocol message per operation (one round trip, but planned every time).
 *      And the raw-SQL floor for comparison.
 *   3. The same statements on one connection, each committing as the server sends them, then
 *      inside a transaction rolled back after each cycle: the statements' own work without the
 *      commit (its WAL flush), per operation.
 *   4. EXPLAIN (ANALYZE, BUFFERS) of the claim and release statements on graphs of 1k and 100k
 *      open items (bench/support.ts buildGraph), on a warm connection (a first claim and
 *      release run unreported in the same rolled-back transaction).
 * Prints a markdown report and writes it to bench/results/profile-<date>.md.
 * `--quick`: short runs, 1k graph only; `--only=statements,cpu,commit,explain` picks sections;
 * `--scales=1000,100000` sets the graph sizes of the EXPLAIN section. For A/B runs,
 * PROFILE_SETUP holds SQL statements (separated by `;;`) run on the migrated database before
 * anything is measured, e.g. `DROP TRIGGER events_notify ON events` to price that trigger.
 */
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type Pg from "pg";
import type { Db } from "../server/db";
import { createInstance } from "../server/instance";
import { migrateDeploy } from "../server/database/migrate";
import { claim } from "../server/operations/claim";
import { release } from "../server/operations/finish";
import {
  agent, benchDir, buildGraph, cpuMeter, createDatabase, dropDatabase, insertReady, log, percentile, pg, sql, startServer, timedLoops,
  type BenchServer, type CpuSample,
} from "./support";

const quick = process.argv.includes("--quick");
const only = process.argv.find((arg) => arg.startsWith("--only="))?.slice("--only=".length);
const sections = new Set(only ? only.split(",") : ["statements", "cpu", "commit", "explain"]);
type Out = (line?: string) => void;
const LATENCY_CYCLES = quick ? 100 : 500;
const CPU_WINDOW_MS = quick ? 1_000 : 3_000;
const CPU_WORKERS = 16;
const EXPLAIN_SCALES = (process.argv.find((arg) => arg.startsWith("--scales="))?.slice("--scales=".length).split(",").map(Number)) ?? (quick ? [1_000] : [1_000, 100_000]);

// --- statement capture at the driver (Prisma's adapter-pg calls pg.Client#query) ----------------

interface Captured {
  name?: string;
  text: string;
  values: unknown[];
}
let capture: Captured[] | null = null;
const originalQuery = pg.Client.prototype.query;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
(pg.Client.prototype as any).query = function (this: Pg.Client, config: any, values?: any, callback?: any) {
  if (capture && typeof config === "string") capture.push({ text: config, values: [] });
  else if (capture && config && typeof config === "object" && typeof config.text === "string") {
    capture.push({ name: config.name, text: config.text, values: [...(config.values ?? [])] });
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (originalQuery as any).call(this, config, values, callback);
};

async function captureCycle(db: Db): Promise<CapturedCycle> {
  const caller = agent("profile");
  capture = [];
  const claimed = await claim(db, caller, "profile", { durationSeconds: 300 });
  const claimStatements = capture;
  capture = [];
  await release(db, caller, { leaseId: claimed!.lease.id, epoch: claimed!.lease.epoch, evidence: "bench" });
  const releaseStatements = capture;
  capture = null;
  return { claim: claimStatements, release: releaseStatements, leaseId: claimed!.lease.id };
}

const oneLine = (text: string, max = 110) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
};

// --- three ways to send the same SQL ------------------------------------------------------------

type Cycle = { claim(worker: number): Promise<string | null>; release(worker: number, leaseId: string): Promise<void> };

function serviceLayer(db: Db): Cycle {
  const epochs = new Map<string, number>();
  return {
    async claim(worker) {
      const caller = agent(`w${worker}`);
      const claimed = await claim(db, caller, caller.workerId!, { durationSeconds: 300 });
      if (!claimed) return null;
      epochs.set(claimed.lease.id, claimed.lease.epoch);
      return claimed.lease.id;
    },
    async release(worker, leaseId) {
      await release(db, agent(`w${worker}`), { leaseId, epoch: epochs.get(leaseId)!, evidence: "bench" });
      epochs.delete(leaseId);
    },
  };
}

/** Values of a captured statement with the captured worker id and lease id swapped for new ones. */
const rebind = (statement: Captured, from: Record<string, string>, to: Record<string, string>) =>
  statement.values.map((value) => {
    for (const key of Object.keys(from)) if (value === from[key]) return to[key];
    return value;
  });

/**
 * The captured statements on bare pg: same prepared statements, same round trips. On a pool,
 * each operation checks a connection out; on a client, every operation runs on that one.
 */
function replay(on: Pg.Pool | Pg.Client, captured: { claim: Captured[]; release: Captured[]; leaseId: string }): Cycle {
  const from = { worker: "profile", lease: captured.leaseId };
  const runOn = async (client: Pg.ClientBase, statements: Captured[], to: Record<string, string>) => {
    let result: Pg.QueryResult | undefined;
    for (const s of statements) {
      const r = await client.query({ name: s.name, text: s.text, values: rebind(s, from, to) });
      if (s.text.includes("lease.claimed")) result = r;
    }
    return result;
  };
  const run = async (statements: Captured[], to: Record<string, string>) => {
    if (on instanceof pg.Client) return runOn(on, statements, to);
    const client = await on.connect();
    try {
      return await runOn(client, statements, to);
    } finally {
      client.release();
    }
  };
  return {
    async claim(worker) {
      const result = await run(captured.claim, { worker: `w${worker}`, lease: "" });
      return (result?.rows[0]?.lease?.id as string | undefined) ?? null;
    },
    async release(worker, leaseId) {
      await run(captured.release, { worker: `w${worker}`, lease: leaseId });
    },
  };
}

/** Parameters inlined as literals; BEGIN; …; COMMIT sent as one message: one round trip per operation. */
function oneRoundTrip(pool: Pg.Pool, captured: { claim: Captured[]; release: Captured[]; leaseId: string }): Cycle {
  const from = { worker: "profile", lease: captured.leaseId };
  const arrayLiteral = (items: unknown[]) => `{${items.map((item) => `"${String(item).replace(/["\\]/g, "\\$&")}"`).join(",")}}`;
  const literal = (value: unknown) =>
    value === null || value === undefined
      ? "NULL"
      : typeof value === "number"
        ? String(value)
        : pg.Client.prototype.escapeLiteral(Array.isArray(value) ? arrayLiteral(value) : String(value));
  const script = (statements: Captured[], to: Record<string, string>) =>
    statements
      .map((s) => {
        const values = rebind(s, from, to);
        return s.text.replace(/\$(\d+)/g, (_, i: string) => literal(values[Number(i) - 1]));
      })
      .join(";\n");
  return {
    async claim(worker) {
      // One statement answers with one result, several with an array of them.
      const answer = (await pool.query(script(captured.claim, { worker: `w${worker}`, lease: "" }))) as unknown as Pg.QueryResult | Pg.QueryResult[];
      const results = Array.isArray(answer) ? answer : [answer];
      const row = results.find((r) => r.fields?.some((f) => f.name === "lease"))?.rows[0];
      return (row?.lease?.id as string | undefined) ?? null;
    },
    async release(worker, leaseId) {
      await pool.query(script(captured.release, { worker: `w${worker}`, lease: leaseId }));
    },
  };
}

async function floorCycle(pool: Pg.Pool): Promise<boolean> {
  const { rows } = await pool.query(`UPDATE floor_jobs SET claimed_at = now() WHERE id = (
    SELECT id FROM floor_jobs WHERE claimed_at IS NULL ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id`);
  if (rows.length === 0) return false;
  await pool.query("UPDATE floor_jobs SET done = true WHERE id = $1", [rows[0].id]);
  return true;
}

// --- measurements -------------------------------------------------------------------------------

/** Claim and release p50 of one worker; `around` runs each cycle (commitSection wraps it in a transaction, untimed). */
async function latency(cycle: Cycle, around = (timed: () => Promise<void>) => timed()) {
  const claimMs: number[] = [];
  const releaseMs: number[] = [];
  for (let i = 0; i < LATENCY_CYCLES; i++) {
    await around(async () => {
      let t = performance.now();
      const leaseId = await cycle.claim(0);
      claimMs.push(performance.now() - t);
      if (!leaseId) throw new Error("ran out of ready items");
      t = performance.now();
      await cycle.release(0, leaseId);
      releaseMs.push(performance.now() - t);
    });
  }
  return { claimP50: percentile(claimMs, 50), releaseP50: percentile(releaseMs, 50) };
}

async function cpuPerCycle(postmasterPid: number | null, run: (workers: number) => Promise<number>) {
  const meter = cpuMeter(postmasterPid);
  const started = performance.now();
  const rate = await run(CPU_WORKERS);
  const cpu: CpuSample = meter.stop();
  const cycles = rate * ((performance.now() - started) / 1000);
  return {
    rate,
    appMs: cpu.appMs / cycles,
    postgresMs: cpu.postgresMs === null ? null : cpu.postgresMs / cycles,
  };
}

interface CapturedCycle {
  claim: Captured[];
  release: Captured[];
  leaseId: string;
}

/** The captured cycle without BEGIN/COMMIT around a lone statement. */
const withoutTransaction = (captured: CapturedCycle): CapturedCycle => {
  const statements = (list: Captured[]) => list.filter((s) => !/^(BEGIN|COMMIT)$/i.test(s.text.trim()));
  return { ...captured, claim: statements(captured.claim), release: statements(captured.release) };
};

function statementsSection(out: Out, captured: CapturedCycle) {
  out();
  out(`## Statements (round trips) per cycle, service layer: claim ${captured.claim.length}, release ${captured.release.length}`);
  out();
  for (const [op, list] of [["claim", captured.claim], ["release", captured.release]] as const) {
    list.forEach((s, i) => out(`- ${op} ${i + 1}: \`${oneLine(s.text)}\` (${s.values.length} parameters, ${s.text.length} characters)`));
  }
}

async function cpuSection(out: Out, server: BenchServer, captured: CapturedCycle) {
  const variants: { name: string; make: (db: Db, pool: Pg.Pool) => Cycle; generic?: boolean; throughPrisma?: boolean }[] = [
    { name: "service layer, hot path through Prisma's $queryRaw (before issue 31)", make: (db) => serviceLayer(db), throughPrisma: true },
    { name: "service layer (hot path on Prisma's pg pool)", make: (db) => serviceLayer(db) },
    { name: "same SQL and round trips on bare pg", make: (_db, pool) => replay(pool, captured) },
    { name: "bare pg, generic plans forced, no BEGIN/COMMIT", make: (_db, pool) => replay(pool, withoutTransaction(captured)), generic: true },
    { name: "one simple-protocol message per operation (planned each time)", make: (_db, pool) => oneRoundTrip(pool, captured) },
  ];
  out();
  out(`## Latency at 1 worker (p50 of ${LATENCY_CYCLES}) and CPU per cycle at ${CPU_WORKERS} workers (${CPU_WINDOW_MS} ms window)`);
  out();
  out("| path | claim p50 (ms) | release p50 (ms) | cycles/s at 16 | app CPU ms/cycle | PostgreSQL CPU ms/cycle |");
  out("|---|---:|---:|---:|---:|---:|");
  for (const [index, variant] of variants.entries()) {
    const name = `bench_profile_${index}`;
    const url = await createDatabase(server.adminUrl, name, "bench_profile_template");
    // Named statements, as `npm start` uses them on its embedded PostgreSQL.
    const dbInstance = createInstance({ databaseUrl: url, connectTimeoutMs: 5_000, poolSize: CPU_WORKERS, namedStatements: true, hotPathThroughPrisma: variant.throughPrisma });
    const db = dbInstance.db;
    const pool = new pg.Pool({ connectionString: url, max: CPU_WORKERS, ...(variant.generic ? { options: "-c plan_cache_mode=force_generic_plan" } : {}) });
    pool.on("error", () => {});
    try {
      const cycle = variant.make(db, pool);
      await latency(cycle); // warm-up: connections and prepared statements
      const lat = await latency(cycle);
      // Open every connection before the CPU window, so no backend starts (or exits) inside it.
      await Promise.all(Array.from({ length: CPU_WORKERS }, (_, w) => cycle.claim(w).then((id) => (id ? cycle.release(w, id) : undefined))));
      const cpu = await cpuPerCycle(server.postmasterPid, (workers) =>
        timedLoops(workers, CPU_WINDOW_MS, async (worker) => {
          const leaseId = await cycle.claim(worker);
          if (!leaseId) return false;
          await cycle.release(worker, leaseId);
          return true;
        }),
      );
      out(`| ${variant.name} | ${lat.claimP50.toFixed(2)} | ${lat.releaseP50.toFixed(2)} | ${cpu.rate.toFixed(0)} | ${cpu.appMs.toFixed(2)} | ${cpu.postgresMs?.toFixed(2) ?? "n/a"} |`);
    } finally {
      await dbInstance.close();
      await pool.end();
      await dropDatabase(server.adminUrl, name);
    }
  }
  const url = await createDatabase(server.adminUrl, "bench_profile_floor");
  const pool = new pg.Pool({ connectionString: url, max: CPU_WORKERS });
  pool.on("error", () => {});
  try {
    await pool.query(`CREATE TABLE floor_jobs (id bigserial PRIMARY KEY, claimed_at timestamptz, done boolean NOT NULL DEFAULT false);
      CREATE INDEX floor_jobs_todo ON floor_jobs (id) WHERE claimed_at IS NULL;
      INSERT INTO floor_jobs (done) SELECT false FROM generate_series(1, 100000);`);
    await pool.query("VACUUM ANALYZE floor_jobs");
    const lat: number[] = [];
    for (let i = 0; i < 2 * LATENCY_CYCLES; i++) {
      const t = performance.now();
      await floorCycle(pool);
      if (i >= LATENCY_CYCLES) lat.push(performance.now() - t);
    }
    await Promise.all(Array.from({ length: CPU_WORKERS }, () => floorCycle(pool)));
    const cpu = await cpuPerCycle(server.postmasterPid, (workers) => timedLoops(workers, CPU_WINDOW_MS, () => floorCycle(pool)));
    out(`| raw-SQL floor (2 autocommit statements) | ${percentile(lat, 50).toFixed(2)} (whole cycle) | — | ${cpu.rate.toFixed(0)} | ${cpu.appMs.toFixed(2)} | ${cpu.postgresMs?.toFixed(2) ?? "n/a"} |`);
  } finally {
    await pool.end();
    await dropDatabase(server.adminUrl, "bench_profile_floor");
  }
}

/**
 * Claim and release p50 on one connection: the captured statements as sent (each autocommit
 * statement commits and waits for its WAL flush), then the same inside a transaction that is
 * rolled back after each cycle, so nothing commits.
 */
async function commitSection(out: Out, server: BenchServer, captured: CapturedCycle) {
  const url = await createDatabase(server.adminUrl, "bench_profile_commit", "bench_profile_template");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const row = (p50: { claimP50: number; releaseP50: number }) => `${p50.claimP50.toFixed(2)} | ${p50.releaseP50.toFixed(2)}`;
  try {
    const asSent = replay(client, captured);
    await latency(asSent); // warm-up: the connection and its prepared statements
    const sent = await latency(asSent);
    const rolledBack = await latency(replay(client, withoutTransaction(captured)), async (timed) => {
      await client.query("BEGIN");
      try {
        await timed();
      } finally {
        await client.query("ROLLBACK");
      }
    });
    out();
    out(`## One connection: the statements with and without their commit (p50 of ${LATENCY_CYCLES})`);
    out();
    out("| | claim p50 (ms) | release p50 (ms) |");
    out("|---|---:|---:|");
    out(`| as sent: each operation commits | ${row(sent)} |`);
    out(`| in a transaction rolled back after each cycle: no commit | ${row(rolledBack)} |`);
  } finally {
    await client.end();
    await dropDatabase(server.adminUrl, "bench_profile_commit");
  }
}

async function explainSection(out: Out, server: BenchServer, n: number) {
  const url = await createDatabase(server.adminUrl, "bench_profile_graph", "bench_profile_base");
  const graph = await buildGraph(url, n);
  const dbInstance = createInstance({ databaseUrl: url, connectTimeoutMs: 5_000, poolSize: 2 });
  const db = dbInstance.db;
  await captureCycle(db); // the statements as a running server sends them
  const statements = await captureCycle(db);
  await dbInstance.close();
  out();
  out(`## EXPLAIN ANALYZE at ${graph.open.toLocaleString("en")} open items (${graph.leased.toLocaleString("en")} leased, at the head of the queue)`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    const from = { worker: "profile", lease: statements.leaseId };
    // Pass 0 warms this connection (plans, trigger functions); pass 1 is reported.
    for (const pass of [0, 1]) {
      for (const [op, list] of [["claim", statements.claim], ["release", statements.release]] as const) {
        let to = { worker: "profile", lease: "" };
        if (op === "release") {
          const { rows } = await client.query("SELECT id::text FROM leases WHERE worker_id = 'profile' AND ended_at IS NULL");
          to = { worker: "profile", lease: rows[0].id };
        }
        for (const [i, s] of list.entries()) {
          if (/^(BEGIN|COMMIT)$/i.test(s.text.trim())) continue;
          const { rows } = await client.query({ text: `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${s.text}`, values: rebind(s, from, to) });
          if (pass === 0) continue;
          out();
          out(`### ${op}, statement ${i + 1}: \`${oneLine(s.text, 80)}\``);
          out();
          out("```");
          for (const row of rows) out(row["QUERY PLAN"]);
          out("```");
        }
      }
    }
  } finally {
    await client.query("ROLLBACK");
    await client.end();
    await dropDatabase(server.adminUrl, "bench_profile_graph");
  }
}

async function main() {
  const server = await startServer();
  const lines: string[] = [];
  const out: Out = (line = "") => {
    lines.push(line);
    console.log(line);
  };
  try {
    const baseUrl = await createDatabase(server.adminUrl, "bench_profile_base");
    await migrateDeploy(baseUrl);
    for (const statement of process.env.PROFILE_SETUP?.split(";;") ?? []) await sql(baseUrl, statement);
    const template = await createDatabase(server.adminUrl, "bench_profile_template", "bench_profile_base");
    // Enough ready items for every variant's latency and CPU runs.
    await insertReady(template, "p-", 2 * LATENCY_CYCLES + 60_000);
    out(`# Profile of a claim → release cycle (${new Date().toISOString()})`);
    out();
    out(`${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, Node ${process.version}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(" / ")}. Server: ${server.settings}`);
    const captureUrl = await createDatabase(server.adminUrl, "bench_profile_capture", "bench_profile_template");
    const captureDbInstance = createInstance({ databaseUrl: captureUrl, connectTimeoutMs: 5_000, poolSize: 2, namedStatements: true });
    const captureDb = captureDbInstance.db;
    await captureCycle(captureDb); // first call: connection set-up and statement preparation
    const captured = await captureCycle(captureDb);
    await captureDbInstance.close();
    if (sections.has("statements")) statementsSection(out, captured);
    if (sections.has("cpu")) await cpuSection(out, server, captured);
    if (sections.has("commit")) await commitSection(out, server, captured);
    for (const n of sections.has("explain") ? EXPLAIN_SCALES : []) await explainSection(out, server, n);
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
  } finally {
    await server.stop();
  }
  const dir = path.join(benchDir, "results");
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `profile-${new Date().toISOString().replace(/[:.]/g, "-")}.md`);
  await writeFile(file, `${lines.join("\n")}\n`);
  log(`written to ${path.relative(process.cwd(), file)}`);
}

await main();
