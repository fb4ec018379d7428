import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  configurationProblems,
  continuitySeconds,
  logLevel,
  maxBatchCalls,
  maxBodyBytes,
  publicUrl,
  SETTING_DEFAULTS,
  statementTimeoutMs,
  type SettingName,
} from "../../server/config";
import { repo, sourceFiles } from "../architecture/support";

/*
 * Issue 23 item 4: one configuration module. server/config.ts holds the schema of every
 * server setting; README "Configuration" documents exactly those; nothing else reads
 * process.env.
 */

afterEach(() => vi.unstubAllEnvs());

/** The rows of README's "## Configuration" table: variable and default cell. */
async function documentedSettings(): Promise<Map<string, string>> {
  const text = await readFile(path.join(repo, "README.md"), "utf8");
  const start = text.indexOf("\n## Configuration\n");
  expect(start).toBeGreaterThan(0);
  const section = text.slice(start, text.indexOf("\n## ", start + 1));
  return new Map([...section.matchAll(/^\| `([A-Z_]+)` \| ([^|]*) \|/gm)].map((match) => [match[1]!, match[2]!.trim()]));
}

describe("README's configuration table and the schema", () => {
  it("list exactly the same variables", async () => {
    const documented = await documentedSettings();
    const schema = [...SETTING_DEFAULTS.keys()];
    expect(schema.length).toBeGreaterThan(15);
    expect(schema.filter((name) => !documented.has(name)).sort(), "in the schema but not in README's table").toEqual([]);
    expect([...documented.keys()].filter((name) => !SETTING_DEFAULTS.has(name as SettingName)).sort(), "in README's table but not in the schema").toEqual([]);
  });

  it("give the same default wherever the schema has one", async () => {
    const documented = await documentedSettings();
    for (const [name, fallback] of SETTING_DEFAULTS) {
      if (fallback === undefined) continue;
      const cell = documented.get(name)!;
      expect(cell.replace("/`", "`"), name).toBe(`\`${String(fallback)}\``);
    }
  });
});

describe("the accessors", () => {
  it("see a change of the environment at run time, and an empty value means the default", () => {
    vi.stubEnv("WORK_GRAPH_MAX_BODY_BYTES", "2048");
    expect(maxBodyBytes()).toBe(2048);
    vi.stubEnv("WORK_GRAPH_MAX_BODY_BYTES", "2KiB");
    expect(maxBodyBytes()).toBe(2048);
    vi.stubEnv("WORK_GRAPH_MAX_BODY_BYTES", "1 MB");
    expect(maxBodyBytes()).toBe(1_000_000);
    vi.stubEnv("WORK_GRAPH_MAX_BODY_BYTES", "");
    expect(maxBodyBytes()).toBe(1024 * 1024);
    vi.stubEnv("WORK_GRAPH_MAX_BATCH", " 30 ");
    expect(maxBatchCalls()).toBe(30);
    vi.stubEnv("WORK_GRAPH_STATEMENT_TIMEOUT_MS", "0");
    expect(statementTimeoutMs()).toBe(0);
    vi.stubEnv("WORK_GRAPH_CONTINUITY_SECONDS", "0.5");
    expect(continuitySeconds()).toBe(0.5);
    vi.stubEnv("WORK_GRAPH_PUBLIC_URL", "https://work.example.com/");
    expect(publicUrl()).toBe("https://work.example.com");
    vi.stubEnv("WORK_GRAPH_PUBLIC_URL", "");
    vi.stubEnv("PORT", "8080");
    expect(publicUrl()).toBe("http://localhost:8080");
  });

  it("refuse a bad value with a message naming the variable and what it accepts, never falling back", () => {
    vi.stubEnv("WORK_GRAPH_LOG_LEVEL", "loud");
    expect(() => logLevel()).toThrow("WORK_GRAPH_LOG_LEVEL=loud: expected one of trace, debug, info, warn, error, fatal, silent");
    vi.stubEnv("WORK_GRAPH_DB_POOL_SIZE", "abc");
    vi.stubEnv("WORK_GRAPH_STATEMENT_TIMEOUT_MS", "-1");
    vi.stubEnv("WORK_GRAPH_MAX_BODY_BYTES", "2TB");
    vi.stubEnv("DATABASE_URL", "mysql://localhost/db");
    vi.stubEnv("WORK_GRAPH_SECRET_KEY", "not-a-key-but-secret");
    const problems = configurationProblems();
    expect(problems).toEqual(
      expect.arrayContaining([
        "WORK_GRAPH_LOG_LEVEL=loud: expected one of trace, debug, info, warn, error, fatal, silent",
        "WORK_GRAPH_DB_POOL_SIZE=abc: expected a whole number from 1 to 1000",
        "WORK_GRAPH_STATEMENT_TIMEOUT_MS=-1: expected a whole number from 0 to 2147483647",
        expect.stringMatching(/^WORK_GRAPH_MAX_BODY_BYTES=2TB: expected a size in bytes/),
        "DATABASE_URL=mysql://localhost/db: expected a postgres:// or postgresql:// URL",
        expect.stringMatching(/^WORK_GRAPH_SECRET_KEY \(20 characters, not shown\): expected a 32-byte key/),
      ]),
    );
    expect(problems).toHaveLength(6);
    expect(problems.join("\n")).not.toContain("not-a-key-but-secret");
    vi.unstubAllEnvs();
    expect(configurationProblems()).toEqual([]);
  });
});

/*
 * Who may read process.env: server/config.ts, for everything the server runs (server/, app/,
 * proxy.ts and the scripts under scripts/, `npm start` first). Excepted: NODE_ENV (the
 * framework's build mode, which Next inlines at build time, not a setting of ours); handing the
 * whole environment to a child process (`...process.env`); scripts/start.ts setting
 * DATABASE_URL, WORK_GRAPH_DB_PREPARED_STATEMENTS (embedded database) and NEXT_TELEMETRY_DISABLED for the Next code it loads. Not scanned: the tests
 * and bench (they set up environments), the agent package (a client with its own settings:
 * docs/agents.md), scripts/browser-tests.mjs (the browser test runner) and generated code.
 */
const CONFIG_MODULE = path.join("server", "config.ts");
const START = path.join("scripts", "start.ts");

/** The places in `text` (the file `file`) that read process.env against the rule above. */
function environmentReads(file: string, text: string): string[] {
  const reads: string[] = [];
  for (const match of text.matchAll(/process\.env\b(?:\.(\w+)(\s*[?|&]{0,2}=(?!=))?)?/g)) {
    const [, name, assignment] = match;
    const spread = text.slice(Math.max(0, match.index - 3), match.index) === "...";
    if (spread || name === "NODE_ENV") continue;
    if (file === START && assignment && (name === "DATABASE_URL" || name === "WORK_GRAPH_DB_PREPARED_STATEMENTS" || name === "NEXT_TELEMETRY_DISABLED")) continue;
    reads.push(`${file}: ${text.slice(match.index, match.index + 45).split("\n")[0]}`);
  }
  return reads;
}

describe("only the configuration module reads process.env", () => {
  it("no other file of the server, the dashboard or the scripts reads a variable", async () => {
    const files = [...(await sourceFiles("server")), ...(await sourceFiles("app")), ...(await sourceFiles("scripts")), "proxy.ts"];
    expect(files.length).toBeGreaterThan(100);
    const offending: string[] = [];
    for (const file of files) {
      if (file !== CONFIG_MODULE) offending.push(...environmentReads(file, await readFile(path.join(repo, file), "utf8")));
    }
    expect(offending).toEqual([]);
  });

  it("the check finds each way of reading, and lets through what the rule allows", () => {
    const reads = [
      "const a = process.env.WORK_GRAPH_MAX_BATCH;",
      "const b = process.env[name];",
      "const { PORT } = process.env;",
      "if (process.env.DATABASE_URL === undefined) {}",
      "process.env.WORK_GRAPH_LOG_LEVEL ??= 'info';",
    ];
    for (const line of reads) expect(environmentReads(path.join("server", "x.ts"), line), line).toHaveLength(1);
    expect(environmentReads(START, "process.env.DATABASE_URL = embedded.url;")).toEqual([]);
    expect(environmentReads(path.join("server", "x.ts"), "process.env.DATABASE_URL = url;")).toHaveLength(1);
    expect(environmentReads(path.join("server", "x.ts"), "spawn(cmd, { env: { ...process.env, LC_ALL: 'C' } }); const dev = process.env.NODE_ENV;")).toEqual([]);
  });
});
