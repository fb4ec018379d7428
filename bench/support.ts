/**
 * Shared by bench/run.ts and bench/profile.ts: the database server, data set-up in bulk SQL,
 * timed worker loops, and CPU accounting for the app process and the PostgreSQL server.
 */
import { readFileSync, readdirSync } from "node:fs";
import { chmod, mkdtemp } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type Pg from "pg";
import { startEmbeddedPostgres } from "../server/database/embedded";
import type { Caller } from "../server/domain/types";

export const benchDir = path.dirname(fileURLToPath(import.meta.url));

/**
 * The app's own `pg` (the driver under Prisma's adapter-pg). A bare `import "pg"` from bench/
 * would resolve to bench/node_modules/pg, the contenders' copy: the floor and the profile use
 * the app's, so they share its driver (and the profile can see its queries).
 */
export const pg = createRequire(path.join(benchDir, "..", "package.json"))("pg") as typeof Pg;

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};
export const log = (message: string) => console.log(`[bench] ${message}`);
export const agent = (workerId: string): Caller => ({ tokenId: `bench-${workerId}`, role: "agent", workerId, actor: workerId, projects: [], capabilities: [] });

export interface BenchServer {
  adminUrl: string;
  /** The postmaster's pid when we started the server (for CPU accounting), else null. */
  postmasterPid: number | null;
  settings: string;
  stop(): Promise<void>;
}

/**
 * The one PostgreSQL server every contender uses: BENCH_DATABASE_URL (a superuser URL to a
 * maintenance database), or an embedded PostgreSQL 18 in a temp directory, started durable
 * (fsync on, synchronous_commit on: PostgreSQL's defaults, what `npm start` runs).
 */
export async function startServer(): Promise<BenchServer> {
  const external = process.env.BENCH_DATABASE_URL;
  if (external) return { adminUrl: external, postmasterPid: null, settings: await serverSettings(external), stop: async () => {} };
  const dir = await mkdtemp(path.join(os.tmpdir(), "work-graph-bench-"));
  await chmod(dir, 0o755);
  const dataDir = path.join(dir, "pg");
  const server = await startEmbeddedPostgres({ dataDir, databaseName: "postgres", durable: true });
  const pid = Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  return { adminUrl: server.adminUrl, postmasterPid: Number.isFinite(pid) ? pid : null, settings: await serverSettings(server.adminUrl), stop: () => server.stop() };
}

async function serverSettings(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const names = ["server_version", "fsync", "synchronous_commit", "full_page_writes", "wal_level", "shared_buffers", "work_mem", "max_connections", "jit"];
  const { rows } = await client.query<{ name: string; setting: string }>(
    "SELECT name, current_setting(name) AS setting FROM unnest($1::text[]) AS name",
    [names],
  );
  await client.end();
  return rows.map((r) => `${r.name}=${r.setting}`).join(", ");
}

export async function createDatabase(adminUrl: string, name: string, template?: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
  await client.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.end();
}

export async function sql(url: string, text: string, values: unknown[] = []): Promise<Pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** `count` ready items (no parent, no dependencies), then VACUUM ANALYZE so every run starts alike. */
export async function insertReady(url: string, prefix: string, count: number) {
  await sql(url, `INSERT INTO work_items (id, title) SELECT $1 || g, 'bench item' FROM generate_series(1, $2) g`, [prefix, count]);
  await sql(url, "VACUUM ANALYZE work_items");
}

/**
 * `count` ready items as agents over HTTP meet them: half roots, half children of decomposed
 * parents in groups of `siblings`, alternating in claim order. A child's release counts its
 * parent down, so siblings released together queue on the parent's row; the parent is ready
 * (and claimed) once its last child is released.
 */
export async function insertReadyWithSiblings(url: string, prefix: string, count: number, siblings = 8) {
  await sql(url, `
    WITH parents AS (
      INSERT INTO work_items (id, title, open_child_count)
      SELECT $1 || 'parent-' || p, 'bench parent', count(*)
        FROM generate_series(2, $2::int, 2) g, LATERAL (SELECT 1 + (g / 2 - 1) / $3::int AS p) grouped
       GROUP BY p)
    INSERT INTO work_items (id, title, parent_id, created_at)
    SELECT $1 || g, 'bench item', CASE WHEN g % 2 = 0 THEN $1 || 'parent-' || (1 + (g / 2 - 1) / $3::int) END,
           now() + g * interval '1 microsecond'
      FROM generate_series(1, $2::int) g`, [prefix, count, siblings]);
  await sql(url, "VACUUM ANALYZE work_items");
}

/**
 * A graph of `n` open items in a realistic mix, with readiness counters consistent with
 * server/domain/readiness.ts, plus 0.25 × n finished items (with their ended leases):
 *   10 % leased     live leases, at the head of the queue (claims take the head, so that is where
 *                   live leases sit); counted as open and still in the claim index
 *   30 % ready      no parent, no dependencies
 *    5 % parents    waiting on 3 children each (open_child_count = 3)
 *   15 % children   ready, under those parents
 *   20 % blocked    one open dependency each, on a parent (open_dependency_count = 1)
 *   10 % under a    children of blocked items: waiting_on_children is what their blocked parents
 *        blocked    show; they inherit the parent's open blocker (ancestor_dependency_count = 1)
 *        parent     and the blocked parents have open_child_count = 2
 *   10 % attention  a blocking attention request on an earlier lease (blocking_attention_count = 1)
 * Priorities 0–9 spread evenly; created_at increases with the id number.
 */
/** The routed graph of BENCHMARKS.md's queue-policy rows: how buildGraph({ routed: true }) spreads its items. */
export const ROUTING = { projects: 20, capabilities: 10, keyedShare: 0.1, limitedKeys: 50, maxLeases: 5 } as const;

/**
 * buildGraph({ routed: true }): spreads the items over ROUTING.projects projects, gives a third
 * of them no required capability, a third one and a third two of ROUTING.capabilities, and puts
 * a tenth on one of ROUTING.limitedKeys keys with a limit — set as each row is inserted (a
 * trigger for the build), so the graph's pages are written once, as in the unrouted graph.
 */
function routingSql(): { before: string; after: string } {
  const { projects, capabilities, keyedShare, limitedKeys, maxLeases } = ROUTING;
  return {
    before: `
    INSERT INTO projects (id, name) SELECT 'p' || g, 'Project ' || g FROM generate_series(1, ${projects - 1}) g;
    INSERT INTO limits (key, max_leases) SELECT 'key-' || g, ${maxLeases} FROM generate_series(0, ${limitedKeys - 1}) g;
    CREATE FUNCTION bench_route() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE h int := abs(hashtext(NEW.id));
    BEGIN
      NEW.project_id := CASE WHEN NEW.parent_id IS NOT NULL THEN (SELECT project_id FROM work_items WHERE id = NEW.parent_id)
                             WHEN h % ${projects} = 0 THEN 'default' ELSE 'p' || (h % ${projects}) END;
      NEW.requires := CASE (h / ${projects}) % 3
        WHEN 0 THEN '{}'::text[]
        WHEN 1 THEN ARRAY['cap-' || (h % ${capabilities})]
        ELSE ARRAY(SELECT DISTINCT unnest(ARRAY['cap-' || (h % ${capabilities}), 'cap-' || ((h / 7) % ${capabilities})]) ORDER BY 1) END;
      NEW.concurrency_key := CASE WHEN (h / 3) % 1000 < ${keyedShare * 1000} THEN 'key-' || (h % ${limitedKeys}) END;
      RETURN NEW;
    END $$;
    CREATE TRIGGER bench_route BEFORE INSERT ON work_items FOR EACH ROW EXECUTE FUNCTION bench_route();`,
    after: `
    DROP TRIGGER bench_route ON work_items;
    DROP FUNCTION bench_route();`,
  };
}

export async function buildGraph(url: string, n: number, options: { routed?: boolean } = {}) {
  const routing = options.routed ? routingSql() : { before: "", after: "" };
  const count = (share: number) => Math.max(1, Math.floor(n * share));
  const leased = count(0.1), ready = count(0.3), parents = count(0.05), children = parents * 3;
  const blocked = count(0.2), underBlocked = Math.floor(count(0.1) / 2) * 2, attention = count(0.1), done = count(0.25);
  const script = `${routing.before}
    -- Leased: the head of the queue (highest priority, oldest).
    INSERT INTO work_items (id, title, priority, created_at)
      SELECT 'leased-' || g, 'leased', 9, now() - interval '2 days' + g * interval '1 ms' FROM generate_series(1, ${leased}) g;
    WITH l AS (
      INSERT INTO leases (work_item_id, worker_id, epoch, acquired_at, expires_at)
      SELECT 'leased-' || g, 'holder-' || g, 1, now(), now() + interval '1 day' FROM generate_series(1, ${leased}) g
      RETURNING id, work_item_id, expires_at)
    UPDATE work_items w SET current_lease_id = l.id, lease_expires_at = l.expires_at, last_epoch = 1 FROM l WHERE w.id = l.work_item_id;

    INSERT INTO work_items (id, title, priority) SELECT 'ready-' || g, 'ready', g % 10 FROM generate_series(1, ${ready}) g;
    INSERT INTO work_items (id, title, priority, open_child_count)
      SELECT 'parent-' || g, 'parent', g % 10, 3 FROM generate_series(1, ${parents}) g;
    INSERT INTO work_items (id, title, parent_id, priority)
      SELECT 'child-' || g, 'child', 'parent-' || (1 + (g - 1) / 3), g % 10 FROM generate_series(1, ${children}) g;
    INSERT INTO work_items (id, title, priority, open_dependency_count, open_child_count)
      SELECT 'blocked-' || g, 'blocked', g % 10, 1, CASE WHEN g <= ${underBlocked / 2} THEN 2 ELSE 0 END FROM generate_series(1, ${blocked}) g;
    INSERT INTO dependencies (work_item_id, depends_on_id)
      SELECT 'blocked-' || g, 'parent-' || (1 + g % ${parents}) FROM generate_series(1, ${blocked}) g;
    INSERT INTO work_items (id, title, parent_id, priority, ancestor_dependency_count)
      SELECT 'under-' || g, 'under a blocked parent', 'blocked-' || (1 + (g - 1) / 2), g % 10, 1 FROM generate_series(1, ${underBlocked}) g;

    -- Needs attention: an earlier lease ended with attention_requested, its request still open.
    INSERT INTO work_items (id, title, priority, blocking_attention_count, last_epoch, previous_worker_id)
      SELECT 'asks-' || g, 'needs attention', g % 10, 1, 1, 'asker-' || (g % 50) FROM generate_series(1, ${attention}) g;
    WITH l AS (
      INSERT INTO leases (work_item_id, worker_id, epoch, acquired_at, expires_at, ended_at, outcome)
      SELECT 'asks-' || g, 'asker-' || (g % 50), 1, now() - interval '1 hour', now() + interval '1 hour', now() - interval '30 minutes', 'attention_requested'
        FROM generate_series(1, ${attention}) g
      RETURNING id, work_item_id, worker_id)
    INSERT INTO attention_requests (work_item_id, lease_id, worker_id, kind, question)
      SELECT work_item_id, id, worker_id, 'decision', 'which way?' FROM l;

    -- Finished work, with the lease that released it.
    INSERT INTO work_items (id, title, status, last_epoch, previous_worker_id)
      SELECT 'done-' || g, 'finished', 'released', 1, 'finisher-' || (g % 50) FROM generate_series(1, ${done}) g;
    INSERT INTO leases (work_item_id, worker_id, epoch, acquired_at, expires_at, ended_at, outcome)
      SELECT 'done-' || g, 'finisher-' || (g % 50), 1, now() - interval '1 day', now(), now() - interval '23 hours', 'released'
        FROM generate_series(1, ${done}) g;${routing.after}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(script);
    await client.query("VACUUM ANALYZE");
    // The counters must match the structure they summarise (as readiness.ts keeps them).
    const { rows } = await client.query(`
      SELECT count(*)::int AS wrong FROM work_items w WHERE w.status = 'open' AND (
        w.open_dependency_count <> (SELECT count(*) FROM dependencies d JOIN work_items b ON b.id = d.depends_on_id WHERE d.work_item_id = w.id AND b.status = 'open')
        OR w.open_child_count <> (SELECT count(*) FROM work_items c WHERE c.parent_id = w.id AND c.status = 'open')
        OR w.ancestor_dependency_count <> coalesce((SELECT p.open_dependency_count + p.ancestor_dependency_count FROM work_items p WHERE p.id = w.parent_id), 0)
        OR w.blocking_attention_count <> (SELECT count(*) FROM attention_requests a WHERE a.work_item_id = w.id AND a.status = 'open' AND a.blocking))`);
    if (rows[0].wrong !== 0) throw new Error(`buildGraph: ${rows[0].wrong} items with inconsistent readiness counters`);
  } finally {
    await client.end();
  }
  return { open: leased + ready + parents + children + blocked + underBlocked + attention, leased, finished: done };
}

/**
 * Runs `workers` concurrent loops of `cycle` for `windowMs`; returns completed cycles per second.
 * A loop stops early when `cycle` returns false (nothing left to claim).
 */
export async function timedLoops(workers: number, windowMs: number, cycle: (worker: number) => Promise<boolean>): Promise<number> {
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

/**
 * Steady-state rate from completion times: jobs completed between the 10th and the 90th
 * percentile completion, over that span. Leaves out start-up (worker boot, first poll) and the
 * tail (the last workers idling), which are not throughput.
 */
export function steadyRate(completedAt: number[]): number {
  if (completedAt.length < 10) return completedAt.length / Math.max(1e-3, ((completedAt.at(-1) ?? 0) - (completedAt[0] ?? 0)) / 1000);
  const sorted = [...completedAt].sort((a, b) => a - b);
  const lo = Math.floor(sorted.length * 0.1), hi = Math.floor(sorted.length * 0.9);
  return (hi - lo) / Math.max(1e-3, (sorted[hi]! - sorted[lo]!) / 1000);
}

const CLOCK_TICK = 100; // USER_HZ on Linux

/** CPU seconds used so far by the postmaster and each child of it (backends, walwriter, autovacuum, …), by pid. */
function postgresCpuSeconds(postmasterPid: number): Map<number, number> {
  const used = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const pid = Number(entry);
      if (pid !== postmasterPid && Number(fields[1]) !== postmasterPid) continue;
      used.set(pid, (Number(fields[11]) + Number(fields[12])) / CLOCK_TICK); // utime + stime
    } catch {
      // the process ended while we looked
    }
  }
  return used;
}

export interface CpuSample {
  appMs: number;
  postgresMs: number | null;
}

/**
 * CPU used between creation and stop() by this Node process and by the PostgreSQL server (when
 * we started it): per server process, what it used since the start (all of it for processes
 * born in between). Processes that exit in between are not counted, so keep pools open across it.
 */
export function cpuMeter(postmasterPid: number | null) {
  const app = process.cpuUsage();
  const before = postmasterPid ? postgresCpuSeconds(postmasterPid) : new Map<number, number>();
  return {
    stop(): CpuSample {
      const used = process.cpuUsage(app);
      let server = 0;
      if (postmasterPid) for (const [pid, seconds] of postgresCpuSeconds(postmasterPid)) server += seconds - (before.get(pid) ?? 0);
      return { appMs: (used.user + used.system) / 1000, postgresMs: postmasterPid ? server * 1000 : null };
    },
  };
}
