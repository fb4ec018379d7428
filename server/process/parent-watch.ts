import path from "node:path";
import { processFacts, stillRunning } from "./proc";

// npm sets its process title to e.g. "npm start --api-only" (one argv entry).
const isNpm = (command: string[]) =>
  command.slice(0, 2).some((arg) => ["npm", "npx", "npm-cli.js", "npx-cli.js"].includes(path.basename(arg.split(" ")[0]!)));

/**
 * The processes whose death should stop the server: every ancestor up to and including the
 * `npm` that launched it (npm → sh → tsx → this server), or just the parent when no npm is in
 * the chain. `docker stop`/systemd signal npm's pid only, and npm's shell does not pass the
 * signal on, so the server watches for them instead of waiting for a signal that never comes.
 */
function watchedAncestors(): { pid: number; startTime: string | null }[] {
  const chain: { pid: number; startTime: string | null }[] = [];
  for (let pid = process.ppid; pid > 1 && chain.length < 8; ) {
    const facts = processFacts(pid);
    if (!facts) break;
    chain.push({ pid, startTime: facts.startTime });
    if (isNpm(facts.command)) return chain;
    pid = facts.parentPid;
  }
  return [{ pid: process.ppid, startTime: chain[0]?.startTime ?? null }];
}

/** Calls `onParentDeath` once, when any watched ancestor is gone. */
export function watchParents(onParentDeath: (pid: number) => void, intervalMs = 500): { stop(): void } {
  const watched = watchedAncestors();
  const initialParent = process.ppid;
  const timer = setInterval(() => {
    const gone = watched.find((ancestor) => !stillRunning(ancestor.pid, ancestor.startTime));
    if (gone || process.ppid !== initialParent) {
      clearInterval(timer);
      onParentDeath(gone?.pid ?? process.ppid);
    }
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
