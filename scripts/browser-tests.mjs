#!/usr/bin/env node
/**
 * Browser tests (`npm test` runs this after vitest): starts the real app the way `npm start`
 * does (embedded PostgreSQL in a temp dir, migrations, Next build when stale, expiry sweep),
 * waits for health, runs tests/browser/*.test.ts (Vitest + playwright-core driving Debian's
 * Chromium), stops the server with SIGINT and removes the temp dir.
 *
 *   node scripts/browser-tests.mjs [vitest filters…]
 *
 * Chromium: $CHROMIUM_PATH, else /usr/bin/chromium (apt-get install chromium). Without one,
 * the run is skipped (exit 0) — except with CI=true, where a missing browser fails.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import readline from "node:readline";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const isCI = /^(1|true|yes)$/i.test(process.env.CI ?? "");
const log = (message) => console.log(`[browser-tests] ${message}`);

function findChromium() {
  const candidates = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];
  return candidates.find((candidate) => candidate && existsSync(candidate)) ?? null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function tail(file, lines = 60) {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

async function main() {
  const chromium = findChromium();
  if (!chromium) {
    if (isCI) {
      console.error("[browser-tests] FAILED: no Chromium found (set CHROMIUM_PATH or apt-get install chromium); CI=true requires the browser tests to run");
      console.log("Browser tests: 0 passed, 1 failed");
      return 1;
    }
    log("skipping browser tests: no Chromium (install Debian's chromium package or set CHROMIUM_PATH)");
    console.log("Browser tests: skipped (no Chromium)");
    return 0;
  }

  const resultsDir = path.join(root, "test-results");
  mkdirSync(resultsDir, { recursive: true });
  const serverLog = path.join(resultsDir, "browser-server.log");
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "work-graph-browser-"));
  chmodSync(dataDir, 0o755); // as root, PostgreSQL runs as the OS user `postgres`
  const port = await freePort();
  const adminToken = `wgx_browser_${randomBytes(18).toString("base64url")}`;
  const baseUrl = `http://127.0.0.1:${port}`;
  // The Slack app is on, its Web API a fake that tests/browser/slack.test.ts serves on this port.
  const slack = {
    WG_FAKE_SLACK_PORT: String(await freePort()),
    WG_SLACK_BOT_TOKEN: `xoxb-browser-${randomBytes(12).toString("hex")}`,
    WG_SLACK_SIGNING_SECRET: randomBytes(16).toString("hex"),
  };

  const env = { ...process.env };
  delete env.DATABASE_URL; // always a fresh embedded database, never someone's real one
  Object.assign(env, {
    PORT: String(port),
    HOST: "127.0.0.1",
    WORK_GRAPH_DATA_DIR: dataDir,
    WORK_GRAPH_ADMIN_TOKEN: adminToken,
    WORK_GRAPH_SWEEP_INTERVAL_MS: "250",
    NEXT_TELEMETRY_DISABLED: "1",
    WORK_GRAPH_SLACK_BOT_TOKEN: slack.WG_SLACK_BOT_TOKEN,
    WORK_GRAPH_SLACK_SIGNING_SECRET: slack.WG_SLACK_SIGNING_SECRET,
    WORK_GRAPH_SLACK_CHANNEL: "C0BROWSER",
    WORK_GRAPH_SLACK_API_URL: `http://127.0.0.1:${slack.WG_FAKE_SLACK_PORT}/api/`,
  });

  log(`starting the app on ${baseUrl} (data in ${dataDir}; log: ${path.relative(root, serverLog)})`);
  const out = createWriteStream(serverLog);
  const server = spawn(process.execPath, ["--import", "tsx", path.join(root, "scripts", "start.ts")], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  server.stdout.pipe(out);
  server.stderr.pipe(out);
  let serverExited = null;
  const exited = new Promise((resolve) => server.on("exit", (code, signal) => resolve((serverExited = { code, signal }))));

  let stopping = null;
  const stopServer = () => {
    stopping ??= (async () => {
      if (!serverExited) {
        server.kill("SIGINT");
        const done = await Promise.race([exited, sleep(30_000).then(() => null)]);
        if (!done) {
          log("server did not stop within 30 s after SIGINT; killing it");
          server.kill("SIGKILL");
          await exited;
        }
      }
      rmSync(dataDir, { recursive: true, force: true });
    })();
    return stopping;
  };
  const onSignal = (signal) => {
    log(`${signal}: stopping`);
    void stopServer().then(() => process.exit(130));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  try {
    // Health: the first start builds the dashboard (next build), which takes a while on 2 cores.
    const started = Date.now();
    const deadline = started + 300_000;
    for (;;) {
      if (serverExited) {
        console.error(`[browser-tests] FAILED: the server exited (${JSON.stringify(serverExited)}) before it was healthy:\n${tail(serverLog)}`);
        console.log("Browser tests: 0 passed, 1 failed");
        return 1;
      }
      try {
        const response = await fetch(`${baseUrl}/api/trpc/health.check`);
        if (response.ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        console.error(`[browser-tests] FAILED: the server was not healthy within 300 s:\n${tail(serverLog)}`);
        console.log("Browser tests: 0 passed, 1 failed");
        return 1;
      }
      await sleep(250);
    }
    // Warm the pages once, so the first test does not pay for Next's first render.
    await fetch(`${baseUrl}/login`).catch(() => null);
    log(`server healthy after ${((Date.now() - started) / 1000).toFixed(1)} s; running the browser tests with ${chromium}`);

    const resultsFile = path.join(resultsDir, "browser-results.json");
    rmSync(resultsFile, { force: true });
    const vitest = spawn(
      process.execPath,
      [
        path.join(root, "node_modules", "vitest", "vitest.mjs"),
        "run",
        "--config",
        path.join(root, "tests", "browser", "vitest.config.ts"),
        "--reporter=default",
        "--reporter=json",
        `--outputFile.json=${resultsFile}`,
        ...process.argv.slice(2),
      ],
      {
        cwd: root,
        stdio: ["inherit", "pipe", "inherit"],
        env: {
          ...process.env,
          ...(process.stdout.isTTY ? { FORCE_COLOR: "1" } : {}),
          WG_BASE_URL: baseUrl,
          WG_ADMIN_TOKEN: adminToken,
          WG_DATA_DIR: dataDir, // the embedded PostgreSQL's cluster is in its postgres/ (outage.test.ts kills it)
          CHROMIUM_PATH: chromium,
          ...slack,
        },
      },
    );
    // Vitest's summary line "Tests  N passed" would read like the unit-test summary to a CI log
    // parser; it is renamed, and the runner's own "Browser tests: …" line carries the counts.
    const lines = readline.createInterface({ input: vitest.stdout });
    const drained = new Promise((resolve) => lines.once("close", resolve));
    lines.on("line", (line) => {
      const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
      console.log(/^\s*Tests\s+\d/.test(plain) ? line.replace("Tests", "Cases") : line);
    });
    const code = await new Promise((resolve) => vitest.on("exit", (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))));
    await drained;
    let summary = null;
    try {
      summary = JSON.parse(readFileSync(resultsFile, "utf8"));
    } catch {
      // vitest did not write results (crashed before the run)
    }
    const passed = summary?.numPassedTests ?? 0;
    // A run that failed without failing a test (a crash, a file that did not load) still counts one failure.
    const failed = Math.max(summary?.numFailedTests ?? 0, code !== 0 ? 1 : 0);
    const skipped = (summary?.numPendingTests ?? 0) + (summary?.numTodoTests ?? 0);
    if (code !== 0) log(`FAILED (vitest exit code ${code}); server log tail:\n${tail(serverLog, 30)}`);
    console.log(`Browser tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
    return code === 0 ? 0 : code || 1;
  } finally {
    await stopServer();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error("[browser-tests] FAILED:", error);
    console.log("Browser tests: 0 passed, 1 failed");
    process.exit(1);
  },
);
