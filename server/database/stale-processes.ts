import { existsSync, readFileSync, readdirSync, readlinkSync, realpathSync, unlinkSync } from "node:fs";
import path from "node:path";

/**
 * Leftovers of a PostgreSQL run whose owner died (kill -9 of the app, a crash): PostgreSQL
 * refuses to start while `postmaster.pid` names a live (or zombie) process, or while a backend
 * of the old run is still attached to its shared memory. Every PostgreSQL process chdirs into
 * its data directory, so /proc/<pid>/cwd tells which processes belong to this cluster.
 * Linux only; elsewhere PostgreSQL's own stale-lock handling is all there is.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? null;
  } catch {
    return null;
  }
}

/** Running (not gone, not a zombie waiting to be reaped). */
function isRunning(pid: number): boolean {
  const state = processState(pid);
  return state !== null && state !== "Z" && state !== "X";
}

function workingDirectory(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}

function isPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres";
  } catch {
    return false;
  }
}

/** Running PostgreSQL processes whose working directory is `dir` (never a shell that happens to be there). */
export function postgresProcessesIn(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    if (workingDirectory(pid) === dir && isPostgres(pid) && isRunning(pid)) pids.push(pid);
  }
  return pids;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

async function waitUntilGone(pids: number[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (pids.some(isRunning)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

async function endAll(pids: number[], steps: [NodeJS.Signals, number][]): Promise<void> {
  for (const [name, waitMs] of steps) {
    for (const pid of pids) signal(pid, name);
    if (await waitUntilGone(pids, waitMs)) return;
  }
}

export async function endStaleProcesses(dataDir: string, log: (line: string) => void): Promise<void> {
  if (!existsSync("/proc/self/stat") || !existsSync(dataDir)) return;
  const dir = realpathSync(dataDir);
  const lockFile = path.join(dir, "postmaster.pid");
  if (existsSync(lockFile)) {
    const pid = Number(readFileSync(lockFile, "utf8").split("\n")[0]);
    if (Number.isInteger(pid) && pid > 0 && isRunning(pid) && isPostgres(pid) && workingDirectory(pid) === dir) {
      log(`PostgreSQL of a previous run (pid ${pid}) still runs on ${dir}: shutting it down`);
      await endAll([pid], [["SIGINT", 10_000], ["SIGQUIT", 5_000], ["SIGKILL", 5_000]]);
    }
    if (existsSync(lockFile)) {
      log(`removing the stale ${lockFile} (its process ${pid} is gone, a zombie or not PostgreSQL)`);
      try {
        unlinkSync(lockFile);
      } catch {
        // removed meanwhile
      }
    }
  }
  const orphans = postgresProcessesIn(dir);
  if (orphans.length > 0) {
    log(`ending ${orphans.length} orphaned PostgreSQL process(es) of ${dir} (pids ${orphans.join(", ")})`);
    await endAll(orphans, [["SIGQUIT", 3_000], ["SIGKILL", 5_000]]);
  }
}
