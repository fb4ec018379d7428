/**
 * The contenders, each on its own database of the same server, with the same worker counts:
 * `jobs` no-op jobs added up front, then `workers` concurrent workers process them all, and the
 * steady-state rate is taken from the completion times (support.ts steadyRate: start-up and the
 * tail are not throughput). Their packages live in bench/package.json, loaded at run time, so
 * the app's dependencies and type check do not depend on them.
 */
import { cpuMeter, median, steadyRate, type CpuSample } from "./support";

export const CONTENDERS = ["graphile-worker (unbatched)", "graphile-worker (batched)", "pg-boss (unbatched)", "pg-boss (batched)"] as const;
export type Contender = (typeof CONTENDERS)[number];

export interface ContenderResult {
  jobsPerSecond: number | null;
  /** CPU per job (ms) of this process and of the PostgreSQL server, from the start of processing to its end. */
  cpu: CpuSample | null;
  note?: string;
}

interface Run {
  rate: number;
  cpu: CpuSample;
}

const perJob = (cpu: CpuSample, jobs: number): CpuSample => ({ appMs: cpu.appMs / jobs, postgresMs: cpu.postgresMs === null ? null : cpu.postgresMs / jobs });

// Loaded by name at run time from bench/node_modules (installed by bench/run.ts on demand).
const load = (name: string): Promise<Record<string, any>> => import(name); // eslint-disable-line @typescript-eslint/no-explicit-any

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/**
 * graphile-worker 0.18 through its library API: `run()` with `concurrency` = workers and a no-op
 * task. Unbatched: its defaults (each worker fetches one job and completes it, two statements
 * per job). Batched: the settings of its performance page (worker.graphile.org/docs/performance):
 * a local queue of 500 jobs fetched in one statement, completions batched
 * (completeJobBatchDelay 0).
 */
async function graphileWorker(url: string, workers: number, jobs: number, batched: boolean, postmasterPid: number | null): Promise<Run> {
  const { run, runMigrations, makeWorkerUtils, Logger } = await load("graphile-worker");
  const { default: pg } = await load("pg");
  const logger = new Logger(() => () => {});
  const pool = new pg.Pool({ connectionString: url, max: workers + 2 });
  pool.on("error", () => {});
  pool.on("connect", (client: { on(event: string, listener: () => void): void }) => client.on("error", () => {}));
  try {
    await runMigrations({ pgPool: pool, logger });
    const utils = await makeWorkerUtils({ pgPool: pool, logger });
    for (let added = 0; added < jobs; added += 1000) {
      await utils.addJobs(Array.from({ length: Math.min(1000, jobs - added) }, () => ({ identifier: "noop", payload: {} })));
    }
    await utils.release();
    const completedAt: number[] = [];
    const meter = cpuMeter(postmasterPid);
    const runner = await run({
      pgPool: pool,
      logger,
      concurrency: workers,
      noHandleSignals: true,
      pollInterval: 100,
      taskList: { noop: async () => void completedAt.push(performance.now()) },
      ...(batched ? { preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } } : {}),
    });
    await waitFor(() => completedAt.length >= jobs, 300_000, "graphile-worker to finish its jobs");
    await runner.stop();
    return { rate: steadyRate(completedAt), cpu: perJob(meter.stop(), jobs) };
  } finally {
    await pool.end();
  }
}

/**
 * pg-boss 12 through `insert` then `work()` with `localConcurrency` = workers and a no-op
 * handler. A pg-boss worker waits a polling interval (≥ 0.5 s) after every fetch unless a burst
 * trigger says there is more work, so each mode runs with the trigger made for it:
 * unbatched = batchSize 1 with burstWhenReadyExceeds (fed by its queue statistics, refreshed
 * every second here, and warm before the clock starts); batched = batchSize 10 with
 * burstWhenBatchFull (fetch and complete 10 jobs per statement).
 */
async function pgBoss(url: string, workers: number, jobs: number, batched: boolean, postmasterPid: number | null): Promise<Run> {
  const { PgBoss } = await load("pg-boss");
  const boss = new PgBoss({
    connectionString: url,
    max: workers + 2,
    superviseIntervalSeconds: 1,
    monitorIntervalSeconds: 1,
    queueCacheIntervalSeconds: 1,
  });
  boss.on("error", () => {});
  await boss.start();
  try {
    await boss.createQueue("noop").catch(() => {}); // exists after the first run
    for (let added = 0; added < jobs; added += 1000) {
      await boss.insert("noop", Array.from({ length: Math.min(1000, jobs - added) }, () => ({ data: {} })));
    }
    if (!batched) {
      // The burst trigger reads the cached ready count: let statistics and cache catch up first.
      await waitFor(async () => ((await boss.getQueue("noop"))?.readyCount ?? 0) >= jobs, 30_000, "pg-boss queue statistics");
      await sleep(1_100);
    }
    const completedAt: number[] = [];
    const meter = cpuMeter(postmasterPid);
    await boss.work(
      "noop",
      batched
        ? { localConcurrency: workers, batchSize: 10, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 }
        : { localConcurrency: workers, batchSize: 1, burstWhenReadyExceeds: 1, pollingIntervalSeconds: 0.5 },
      async (batch: unknown[]) => {
        const now = performance.now();
        for (let i = 0; i < batch.length; i++) completedAt.push(now);
      },
    );
    await waitFor(() => completedAt.length >= jobs, 300_000, "pg-boss to finish its jobs");
    return { rate: steadyRate(completedAt), cpu: perJob(meter.stop(), jobs) };
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

export async function runContender(
  contender: Contender,
  url: string,
  workers: number,
  jobs: number,
  runs: number,
  postmasterPid: number | null,
): Promise<ContenderResult> {
  try {
    const results: Run[] = [];
    for (let run = 0; run < runs; run++) {
      results.push(
        contender.startsWith("pg-boss")
          ? await pgBoss(url, workers, jobs, contender === "pg-boss (batched)", postmasterPid)
          : await graphileWorker(url, workers, jobs, contender === "graphile-worker (batched)", postmasterPid),
      );
    }
    const server = results.map((r) => r.cpu.postgresMs).filter((v): v is number => v !== null);
    return {
      jobsPerSecond: median(results.map((r) => r.rate)),
      cpu: { appMs: median(results.map((r) => r.cpu.appMs)), postgresMs: server.length ? median(server) : null },
    };
  } catch (error) {
    return { jobsPerSecond: null, cpu: null, note: `skipped: ${(error as Error).message.split("\n")[0]}` };
  }
}
