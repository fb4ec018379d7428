/**
 * `npm run test:python`: the Python client (clients/python) against the real server — its
 * pytest suite (fencing, run_worker's renewal thread, Standard Webhooks verification) and
 * `mypy --strict` — outside Vitest, as CI's own step. The server is `scripts/start.ts --api-only`
 * on a temp data directory (its embedded PostgreSQL, sweep and webhook dispatcher), as a user
 * runs it. The venv lives under node_modules/.cache and is installed once, again only when
 * clients/python's sources change; `--install-only` just prepares it (CI starts that early, in
 * the background, so pip's downloads overlap the other tests). Ends with
 * `Python client: N passed, N failed` (mypy counts as one test).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { projectRoot } from "../server/database/migrate";
import { startServer, stopServer, tempDataDir, waitReady } from "./server-process";

const CLIENT_DIR = path.join(projectRoot(), "clients", "python");
const VENV = path.join(projectRoot(), "node_modules", ".cache", "work-graph-python");
const PYTHON = path.join(VENV, "bin", "python");
const STAMP = path.join(VENV, "installed-from");

interface Run {
  code: number | null;
  output: string;
}

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

const count = (output: string, word: string) => Number(output.match(new RegExp(`(\\d+) ${word}`))?.[1] ?? 0);

async function main(): Promise<number> {
  await ensureVenv();
  if (process.argv.includes("--install-only")) return 0;
  const data = tempDataDir();
  const server = await startServer({ dataDir: data.dir });
  let passed = 0;
  let failed = 0;
  try {
    await waitReady(server);
    const env = { WORK_GRAPH_URL: server.url, WORK_GRAPH_ADMIN_TOKEN: server.adminToken };
    const pytest = await run(PYTHON, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=5", "tests"], { cwd: CLIENT_DIR, env });
    process.stdout.write(pytest.output);
    passed += count(pytest.output, "passed");
    failed += count(pytest.output, "failed") + count(pytest.output, "errors?");
    if (pytest.code !== 0 && failed === 0) failed = 1;
    const mypy = await run(PYTHON, ["-m", "mypy", "--strict", "--cache-dir", path.join(VENV, "mypy-cache"), "src", "tests"], { cwd: CLIENT_DIR });
    process.stdout.write(mypy.output);
    if (mypy.code === 0) passed++;
    else failed++;
  } finally {
    await stopServer(server);
    data.remove();
  }
  console.log(`Python client: ${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    console.log("Python client: 0 passed, 1 failed");
    process.exit(1);
  },
);
