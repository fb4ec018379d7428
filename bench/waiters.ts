/**
 * Waiting claims (API.md "Waiting instead of polling"): `waiters` agents in another process
 * each hold a waiting `leases.claim` over HTTP against one app instance (the real tRPC handler,
 * pool of 20). Measured in the server process: memory per waiter, database connections while
 * they wait, the latency of an ordinary request meanwhile, and wake-up latency from the commit
 * that made an item ready to the response reaching the agent — for items made ready one at a
 * time (each wakes one of the remaining waiters) and for a burst made ready by one commit.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createToken } from "../server/auth/tokens";
import { createInstance } from "../server/instance";
import { createWorkItem } from "../server/operations/create";
import { startTestServer } from "../tests/support/app";
import { benchDir, log, median, percentile, sql } from "./support";

export interface WaiterResult {
  waiters: number;
  heapBytesPerWaiter: number;
  rssBytesPerWaiter: number;
  connectionsIdle: number;
  connectionsWaiting: number;
  otherRequestP50Idle: number;
  otherRequestP50Waiting: number;
  single: { samples: number; p50: number; p99: number; max: number };
  burst: { items: number; p50: number; p99: number; max: number };
}

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const wallClock = () => performance.timeOrigin + performance.now();

function memory() {
  gc();
  gc();
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, rss: usage.rss };
}

async function until(condition: () => boolean, what: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`waiter bench: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const stats = (values: number[]) => ({ p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values) });

export async function waiterBenchmark(url: string, options: { waiters: number; singles: number }): Promise<WaiterResult> {
  const dbInstance = createInstance({ databaseUrl: url, connectTimeoutMs: 5_000, poolSize: 20 });
  const db = dbInstance.db;
  const server = await startTestServer(dbInstance);
  const hub = dbInstance.wakeups;
  const dbName = new URL(url).pathname.slice(1);
  const connections = async () =>
    Number((await sql(url, "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'", [dbName])).rows[0].count) - 1;
  const operator = { tokenId: "bench-operator", role: "operator" as const, workerId: null, actor: "operator:bench", projects: [], capabilities: [] };
  const { token: readerToken } = await createToken(db, { role: "operator", label: "bench reader" });
  const otherRequest = async (samples: number) => {
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      const response = await fetch(`${server.url}/api/trpc/workItems.list?input=${encodeURIComponent('{"limit":10}')}`, { headers: { authorization: `Bearer ${readerToken}` } });
      await response.arrayBuffer();
      times.push(performance.now() - started);
    }
    return median(times);
  };
  try {
    const tokens = await Promise.all(Array.from({ length: options.waiters }, async (_, i) => (await createToken(db, { role: "agent", workerId: `waiter-${i}` })).token));
    await hub.ready();
    const otherRequestP50Idle = await otherRequest(50);
    const connectionsIdle = await connections();
    const before = memory();

    const responses = new Map<string, number>();
    const clients = spawn(process.execPath, [...process.execArgv, path.join(benchDir, "waiter-clients.ts"), server.url, JSON.stringify({ tokens, waitSeconds: 60 })], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let buffered = "";
    clients.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        const { id, at } = JSON.parse(line) as { id: string; at: number };
        responses.set(id, at);
      }
    });
    const exited = new Promise<number | null>((resolve) => clients.on("exit", resolve));

    await until(() => hub.waitingClaims === options.waiters, `${options.waiters} waiting claims`);
    const during = memory();
    const connectionsWaiting = await connections();
    const otherRequestP50Waiting = await otherRequest(50);
    log(`waiters: ${options.waiters} waiting; heap +${((during.heap - before.heap) / options.waiters / 1024).toFixed(1)} KiB each; connections ${connectionsIdle} → ${connectionsWaiting}`);

    const single: number[] = [];
    for (let i = 0; i < options.singles; i++) {
      const id = `single-${i}`;
      await createWorkItem(db, operator, { id, title: "one at a time" });
      const committedAt = wallClock();
      await until(() => responses.has(id), `the waiter that takes ${id}`, 30_000);
      single.push(responses.get(id)! - committedAt);
    }

    const burstItems = options.waiters - options.singles;
    // One commit makes them all ready (items and their events, as workItems.create writes them).
    await sql(url, `BEGIN;
      INSERT INTO work_items (id, title) SELECT 'burst-' || g, 'burst' FROM generate_series(1, ${burstItems}) g;
      INSERT INTO events (work_item_id, type, actor) SELECT 'burst-' || g, 'work_item.created', 'bench' FROM generate_series(1, ${burstItems}) g;
      COMMIT;`);
    const burstCommittedAt = wallClock();
    await until(() => responses.size === options.waiters, "every burst item to be claimed");
    const burst = [...responses].filter(([id]) => id.startsWith("burst-")).map(([, at]) => at - burstCommittedAt);
    if ((await exited) !== 0) throw new Error("waiter clients failed");

    return {
      waiters: options.waiters,
      heapBytesPerWaiter: (during.heap - before.heap) / options.waiters,
      rssBytesPerWaiter: (during.rss - before.rss) / options.waiters,
      connectionsIdle,
      connectionsWaiting,
      otherRequestP50Idle,
      otherRequestP50Waiting,
      single: { samples: single.length, ...stats(single) },
      burst: { items: burst.length, ...stats(burst) },
    };
  } finally {
    await server.close();
    await dbInstance.close();
  }
}

export function renderWaiters(result: WaiterResult | null): string[] {
  if (!result) return [];
  const ms = (value: number) => value.toFixed(1);
  return [
    "",
    `### Waiting claims (${result.waiters.toLocaleString("en")} agents, one app instance, pool of 20)`,
    "",
    "| measure | value |",
    "|---|---:|",
    `| server memory per waiting claim (heap after GC / RSS) | ${(result.heapBytesPerWaiter / 1024).toFixed(1)} KiB / ${(result.rssBytesPerWaiter / 1024).toFixed(1)} KiB |`,
    `| database connections of the app: idle → ${result.waiters.toLocaleString("en")} waiting | ${result.connectionsIdle} → ${result.connectionsWaiting} |`,
    `| workItems.list p50 over HTTP: no waiters → ${result.waiters.toLocaleString("en")} waiting | ${ms(result.otherRequestP50Idle)} → ${ms(result.otherRequestP50Waiting)} ms |`,
    `| wake-up, commit → response, items made ready one at a time (${result.single.samples}): p50 / p99 / max | ${ms(result.single.p50)} / ${ms(result.single.p99)} / ${ms(result.single.max)} ms |`,
    `| wake-up, commit → response, ${result.burst.items.toLocaleString("en")} items ready in one commit: p50 / p99 / max | ${ms(result.burst.p50)} / ${ms(result.burst.p99)} / ${ms(result.burst.max)} ms |`,
  ];
}
