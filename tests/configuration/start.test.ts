import { afterAll, describe, expect, it } from "vitest";
import { startServer, tempDataDir } from "../../scripts/server-process";

/*
 * Issue 23 item 4: `npm start` (scripts/start.ts --api-only) with an invalid setting of each
 * kind exits non-zero before starting anything, with a message naming the variable and what it
 * accepts.
 */
const data = tempDataDir();
afterAll(() => data.remove());

async function startWith(env: Record<string, string>) {
  const server = await startServer({ dataDir: data.dir, env });
  const { code } = await server.exited;
  return { code, output: server.output() };
}

describe("npm start refuses an invalid setting", () => {
  it.each([
    ["a number", "WORK_GRAPH_DB_POOL_SIZE", "abc", "expected a whole number from 1 to 1000"],
    ["a number out of range", "PORT", "70000", "expected a whole number from 0 to 65535"],
    ["an enum", "WORK_GRAPH_LOG_LEVEL", "loud", "expected one of trace, debug, info, warn, error, fatal, silent"],
    ["a URL", "WORK_GRAPH_PUBLIC_URL", "localhost:3000", "expected an http:// or https:// URL"],
    ["a database URL", "DATABASE_URL", "not a url", "expected a postgres:// or postgresql:// URL"],
    ["a size", "WORK_GRAPH_MAX_BODY_BYTES", "1XB", "expected a size in bytes from 1 to 1 GiB"],
  ])("%s: %s=%s", async (_kind, name, value, accepts) => {
    const { code, output } = await startWith({ [name]: value });
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(output).toContain(`${name}=${value}: ${accepts}`);
    const line = JSON.parse(output.trim().split("\n").at(-1)!) as { level: number; msg: string; problems: string[] };
    expect(line.level).toBe(60); // fatal
    expect(line.problems).toHaveLength(1);
    expect(line.problems[0]).toContain(`${name}=${value}: ${accepts}`);
    expect(output).not.toContain("starting embedded PostgreSQL");
  });

  it("names every invalid variable at once, and never shows a secret's value", async () => {
    const { code, output } = await startWith({ WORK_GRAPH_SWEEP_INTERVAL_MS: "10", WORK_GRAPH_SECRET_KEY: "hunter2-hunter2" });
    expect(code).not.toBe(0);
    expect(output).toContain("WORK_GRAPH_SWEEP_INTERVAL_MS=10: expected a whole number from 50 to 3600000");
    expect(output).toContain("WORK_GRAPH_SECRET_KEY (15 characters, not shown): expected a 32-byte key");
    expect(output).not.toContain("hunter2");
  });
});
