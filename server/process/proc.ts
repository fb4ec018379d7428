import { readFileSync } from "node:fs";

/** Facts about a process from /proc (Linux); null where /proc has no answer. */
export interface ProcessFacts {
  pid: number;
  parentPid: number;
  state: string;
  /** Start time in clock ticks since boot: together with the pid, names one process even after pid reuse. */
  startTime: string;
  command: string[];
}

export function processFacts(pid: number): ProcessFacts | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    return { pid, state: fields[0]!, parentPid: Number(fields[1]), startTime: fields[19]!, command };
  } catch {
    return null;
  }
}

/** The process `pid`, started at `startTime`, still runs (is not gone, not a zombie, not a reused pid). */
export function stillRunning(pid: number, startTime: string | null): boolean {
  const facts = processFacts(pid);
  if (facts) return facts.state !== "Z" && facts.state !== "X" && (startTime === null || facts.startTime === startTime);
  try {
    process.kill(pid, 0); // no /proc (macOS): existence is all we can tell
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
