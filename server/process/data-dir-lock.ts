import { openSync, readFileSync, unlinkSync, writeSync, closeSync } from "node:fs";
import { processFacts, stillRunning } from "./proc";

export class DataDirBusyError extends Error {}

/**
 * One server per embedded data directory: `server.pid` holds the owner's pid and start time.
 * A pid file whose process is gone (kill -9, a crash) is stale and taken over; a live owner is a
 * clear error. Created with O_EXCL, so two servers starting at the same moment cannot both win.
 */
export function lockDataDir(file: string): { release(): void } {
  const me = JSON.stringify({ pid: process.pid, startTime: processFacts(process.pid)?.startTime ?? null });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, "wx", 0o644);
      writeSync(fd, `${me}\n`);
      closeSync(fd);
      return {
        release() {
          try {
            if (readFileSync(file, "utf8").trim() === me) unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let owner: { pid?: unknown; startTime?: unknown } = {};
    try {
      owner = JSON.parse(readFileSync(file, "utf8")) as typeof owner;
    } catch {
      // half-written or garbage: treated as stale
    }
    if (typeof owner.pid === "number" && stillRunning(owner.pid, typeof owner.startTime === "string" ? owner.startTime : null)) {
      throw new DataDirBusyError(
        `another Work Graph server (pid ${owner.pid}) is running on this data directory (${file}); stop it first, or use another WORK_GRAPH_DATA_DIR`,
      );
    }
    try {
      unlinkSync(file);
    } catch {
      // another starter removed it first; the next O_EXCL attempt decides
    }
  }
  throw new DataDirBusyError(`could not take ${file}: another server is starting on the same data directory`);
}
