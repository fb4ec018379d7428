import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect } from "vitest";
import { startWebhookDispatcher } from "../../server/integrations/webhooks/dispatcher";
import { callerAs } from "../support/app";
import { databaseTest } from "../support/fixtures";

/*
 * The Python client (clients/python) against the real server: its pytest suite (fencing,
 * run_worker's renewal thread, Standard Webhooks verification) and mypy --strict. The venv
 * lives under node_modules/.cache and is reused while clients/python is unchanged; pip
 * installs from whatever index pip is configured with.
 */

const CLIENT_DIR = path.resolve("clients/python");
const VENV = path.resolve("node_modules/.cache/work-graph-python");
const PYTHON = path.join(VENV, "bin", "python");
const STAMP = path.join(VENV, "installed-from");

interface Run {
  code: number | null;
  output: string;
}

/** Runs a command without blocking the event loop: the API server of this file answers in this process. */
function run(command: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", ...options.env } });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (name === "__pycache__" || name.endsWith(".egg-info")) return [];
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

/** What the installed package was built from: pyproject.toml and the package sources. */
function sourceHash(): string {
  const hash = createHash("sha256");
  for (const file of [path.join(CLIENT_DIR, "pyproject.toml"), ...filesUnder(path.join(CLIENT_DIR, "src")).sort()]) {
    hash.update(file).update(readFileSync(file));
  }
  return hash.digest("hex");
}

async function ensureVenv(): Promise<void> {
  if (!existsSync(PYTHON)) {
    const made = await run("python3", ["-m", "venv", VENV]);
    if (made.code !== 0) throw new Error(`python3 -m venv failed (Debian: apt-get install python3-venv):\n${made.output}`);
  }
  const wanted = sourceHash();
  if (existsSync(STAMP) && readFileSync(STAMP, "utf8") === wanted) return;
  const installed = await run(PYTHON, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", `${CLIENT_DIR}[test]`]);
  if (installed.code !== 0) throw new Error(`pip install failed:\n${installed.output}`);
  writeFileSync(STAMP, wanted);
}

const it = databaseTest().extend("python", { scope: "file" }, async ({ database, server }, { onCleanup }) => {
  const dispatcher = startWebhookDispatcher(database.db, { publicUrl: server.url });
  onCleanup(() => dispatcher.stop());
  const { token } = await callerAs(database.db, "admin");
  await ensureVenv();
  return { env: { WORK_GRAPH_URL: server.url, WORK_GRAPH_ADMIN_TOKEN: token } };
});

describe("the Python client", () => {
  it("passes its pytest suite against the real server", { timeout: 900_000 }, async ({ python }) => {
    const result = await run(PYTHON, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=5", "tests"], { cwd: CLIENT_DIR, env: python.env });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/\d+ passed/);
    expect(result.output).not.toMatch(/\b(failed|error)\b/);
  });

  it("is clean under mypy --strict", { timeout: 300_000 }, async () => {
    const result = await run(PYTHON, ["-m", "mypy", "--strict", "--cache-dir", path.join(VENV, "mypy-cache"), "src", "tests"], { cwd: CLIENT_DIR });
    expect(result.code, result.output).toBe(0);
  });
});
