import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "../server/database/embedded";
import { projectRoot } from "../server/database/migrate";

/**
 * The real `scripts/start.ts` in --api-only mode (no Next build) on free ports and a temp data
 * directory: what the lifecycle tests (tests/reliability/) and `npm run chaos` start, kill and restart.
 * With `dashboard: true` it is the full app instead (no --api-only: start.ts builds Next when
 * .next is missing or stale, then serves the dashboard too), as `scripts/pooler-soak.ts --dashboard` runs it.
 */

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 90_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export function tempDataDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "work-graph-lifecycle-"));
  chmodSync(dir, 0o755); // as root, PostgreSQL runs as the OS user `postgres`
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface RunningServer {
  child: ChildProcess;
  port: number;
  url: string;
  adminToken: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  isRunning(): boolean;
  /** Started with the dashboard (Next), not --api-only. */
  dashboard: boolean;
}

export interface StartOptions {
  dataDir: string;
  port?: number;
  env?: Record<string, string>;
  /** Run through `npm start` (npm → sh → tsx → start.ts) instead of node directly. */
  viaNpm?: boolean;
  adminToken?: string;
  /**
   * The full app with the dashboard instead of --api-only. Its first start may build Next
   * (minutes on a loaded machine): waitReady then waits up to DASHBOARD_READY_TIMEOUT_MS.
   */
  dashboard?: boolean;
}

/** How long waitReady waits by default: the API alone, and the full app that may first build Next. */
export const API_READY_TIMEOUT_MS = 120_000;
export const DASHBOARD_READY_TIMEOUT_MS = 900_000;

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const port = options.port ?? (await freePort());
  const adminToken = options.adminToken ?? `wgx_lifecycle_${randomBytes(18).toString("base64url")}`;
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  Object.assign(env, {
    PORT: String(port),
    HOST: "127.0.0.1",
    WORK_GRAPH_DATA_DIR: options.dataDir,
    WORK_GRAPH_ADMIN_TOKEN: adminToken,
    WORK_GRAPH_SWEEP_INTERVAL_MS: "250",
    NEXT_TELEMETRY_DISABLED: "1",
    ...options.env,
  });
  const root = projectRoot();
  const dashboard = options.dashboard ?? false;
  const mode = dashboard ? [] : ["--api-only"];
  const child = options.viaNpm
    ? spawn("npm", ["start", "--silent", ...(mode.length ? ["--", ...mode] : [])], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
    : spawn(process.execPath, ["--import", "tsx", path.join(root, "scripts", "start.ts"), ...mode], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  let running = true;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => {
      running = false;
      resolve({ code, signal });
    }),
  );
  return { child, port, url: `http://127.0.0.1:${port}`, adminToken, output: () => output, exited, isRunning: () => running, dashboard };
}

/**
 * Waits until /api/health/ready answers 200 (or the server exits, which fails with its output).
 * The server listens only once started (for the dashboard: after any Next build and Next's prepare).
 */
export async function waitReady(server: RunningServer, timeoutMs = server.dashboard ? DASHBOARD_READY_TIMEOUT_MS : API_READY_TIMEOUT_MS): Promise<void> {
  await until(
    "the server to be ready",
    async () => {
      if (!server.isRunning()) throw new Error(`server exited before it was ready:\n${server.output()}`);
      const response = await fetch(`${server.url}/api/health/ready`);
      return response.status === 200;
    },
    timeoutMs,
    server.dashboard ? 500 : 100, // a Next build wants the CPU more than a quick answer
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n--- server output ---\n${server.output()}`);
  });
}

export async function stopServer(server: RunningServer, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (!server.isRunning()) return;
  server.child.kill(signal);
  const done = await Promise.race([server.exited.then(() => true), sleep(60_000).then(() => false)]);
  if (!done) {
    server.child.kill("SIGKILL");
    await server.exited;
  }
}

export function postmasterPid(clusterDir: string): number {
  return Number(readFileSync(path.join(clusterDir, "postmaster.pid"), "utf8").split("\n")[0]);
}

export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

export async function call(url: string, pathAndQuery: string, init: RequestInit & { token?: string } = {}) {
  const headers = new Headers(init.headers);
  if (init.token) headers.set("authorization", `Bearer ${init.token}`);
  if (init.body) headers.set("content-type", "application/json");
  const response = await fetch(`${url}${pathAndQuery}`, { ...init, headers });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body: body as Record<string, any>, text }; // eslint-disable-line @typescript-eslint/no-explicit-any
}
