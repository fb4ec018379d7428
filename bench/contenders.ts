/**
 * The contenders, each on its own database of the same server, with the same worker counts:
 * N no-op jobs added up front, then the time for N workers to process all of them.
 * Their packages live in bench/package.json (loaded at run time, so the app's type check and
 * dependencies do not depend on them).
 */
import pg from "pg";

export interface ContenderResult {
  jobsPerSecond: number | null;
  note?: string;
}

type Contender = "graphile-worker (unbatched)" | "graphile-worker (batched)" | "pg-boss";

// Loaded by name at run time: bench/node_modules is installed by bench/run.ts on demand.
const load = (name: string): Promise<Record<string, any>> => import(name); // eslint-disable-line @typescript-eslint/no-explicit-any

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function waitFor(condition: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the jobs to finish");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function graphileWorker(url: string, workers: number, jobs: number, batched: boolean): Promise<number> {
  const { run, runMigrations, makeWorkerUtils, Logger } = await load("graphile-worker");
  const logger = new Logger(() => () => {});
  const pool = new pg.Pool({ connectionString: url, max: workers + 4 });
  await runMigrations({ pgPool: pool, logger });
  const utils = await makeWorkerUtils({ pgPool: pool, logger });
  for (let added = 0; added < jobs; added += 1000) {
    await utils.addJobs(Array.from({ length: Math.min(1000, jobs - added) }, () => ({ identifier: "noop", payload: {} })));
  }
  let done = 0;
  const started = performance.now();
  const runner = await run({
    pgPool: pool,
    logger,
    concurrency: workers,
    noHandleSignals: true,
    pollInterval: 100,
    taskList: { noop: async () => { done++; } },
    ...(batched ? { preset: { worker: { localQueue: { size: Math.max(workers * 2, 10) }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } } : {}),
  });
  await waitFor(() => done >= jobs, 300_000);
  const seconds = (performance.now() - started) / 1000;
  await runner.stop();
  await utils.release();
  await pool.end();
  return jobs / seconds;
}

async function pgBoss(url: string, workers: number, jobs: number): Promise<number> {
  const { PgBoss } = await load("pg-boss");
  const boss = new PgBoss({ connectionString: url, max: workers + 4 });
  boss.on("error", () => {});
  await boss.start();
  await boss.createQueue("noop");
  for (let added = 0; added < jobs; added += 1000) {
    await boss.insert("noop", Array.from({ length: Math.min(1000, jobs - added) }, () => ({ data: {} })));
  }
  let done = 0;
  const started = performance.now();
  // batchSize 1 waits a polling interval (≥ 0.5 s) between fetches; with a batch it keeps
  // fetching while batches come back full, which is how pg-boss is meant to be run at volume.
  await boss.work("noop", { batchSize: 10, localConcurrency: workers, pollingIntervalSeconds: 0.5 }, async (batch: unknown[]) => {
    done += batch.length;
  });
  await waitFor(() => done >= jobs, 300_000);
  const seconds = (performance.now() - started) / 1000;
  await boss.stop({ graceful: false, wait: true });
  return jobs / seconds;
}

export async function runContender(contender: Contender, url: string, workers: number, jobs: number, runs: number): Promise<ContenderResult> {
  try {
    const results: number[] = [];
    for (let run = 0; run < runs; run++) {
      // Fewer jobs for one worker keeps its run as short as the others'.
      const count = Math.max(100, Math.round(jobs * Math.min(1, workers / 4)));
      if (contender === "pg-boss") results.push(await pgBoss(url, workers, Math.min(count, 100 * workers)));
      else results.push(await graphileWorker(url, workers, count, contender === "graphile-worker (batched)"));
    }
    return { jobsPerSecond: median(results) };
  } catch (error) {
    return { jobsPerSecond: null, note: `skipped: ${(error as Error).message.split("\n")[0]}` };
  }
}
