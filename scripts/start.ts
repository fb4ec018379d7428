/**
 * `npm start`: database (embedded unless DATABASE_URL), migrations, admin token, Next build
 * when missing or stale, the HTTP server with the dashboard and /api/trpc, the expiry
 * sweep and the webhook dispatcher. `--api-only` serves /api/trpc, /api/metrics and
 * /api/health without the dashboard (no build). First of all, every setting is checked
 * (server/config.ts): a bad one stops the start with a message naming it. Every line it writes
 * is a pino log line (server/log.ts).
 *
 * Lifecycle (docs/operations.md): the embedded PostgreSQL is supervised (restarted with backoff
 * if it dies); SIGINT/SIGTERM — or the death of the npm that launched us — drains in-flight
 * requests (WORK_GRAPH_SHUTDOWN_GRACE_MS, default 10 s), then stops the sweep and the database.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { createInterface } from "node:readline";
import { format } from "node:util";
import { checkAdminTokenSetting, ensureAdminToken } from "../server/auth/tokens";
import { adminTokenSetting, configurationProblems, databaseUrl, dataDir, directDatabaseUrl, preparedStatements, embeddedDatabasePort, githubApiSettings, host as configuredHost, port as configuredPort, publicUrl, shutdownGraceMs, slackSettings, sweepIntervalMs } from "../server/config";
import { createDb, getDb } from "../server/db";
import { isDatabaseUnavailable, noteDatabaseDown, noteDatabaseUp } from "../server/database/availability";
import { startEmbeddedPostgres, type EmbeddedDatabase, type SupervisorEvent } from "../server/database/embedded";
import { createDatabaseIfAbsent } from "../server/database/create-database";
import { hasPendingMigrations, migrateDeploy, projectRoot } from "../server/database/migrate";
import { refuseUnsupportedServer } from "../server/database/server-version";
import { markDraining, recordSweepPass } from "../server/health";
import { startExpirySweeper } from "../server/operations/sweep";
import { handleApiOnly, handleNodeApi, servesApi } from "../server/http/node-api";
import { lockDataDir } from "../server/process/data-dir-lock";
import { watchParents } from "../server/process/parent-watch";
import { slackApp } from "../server/integrations/slack/client";
import { slackAppDelivery, syncSlackAppWebhook } from "../server/integrations/slack/deliver";
import { startWebhookDispatcher } from "../server/integrations/webhooks/dispatcher";
import { sweepOldGithubDeliveries } from "../server/integrations/github/operations";
import { githubApi, githubDelivery, syncGithubWebhook } from "../server/integrations/github/progress";
import { ensureSecretKey } from "../server/integrations/webhooks/secret-box";
import { configurationErrorLogger, lifecycleLogger, logger } from "../server/log";

const root = projectRoot();
const dev = process.argv.includes("--dev");
const apiOnly = process.argv.includes("--api-only");
const log = (message: string) => lifecycleLogger().info(message);
// A parent that died takes the read end of our stdout with it: writing must not crash the
// server before it has stopped its database (the parent watch below stops it cleanly).
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});

/**
 * Next writes some lines of its own through `console` at run time (the time its config took to
 * load, a page's render error): they join the log as pino lines with `source: "next"`, so
 * stdout stays one JSON line per entry for whatever collects it.
 */
function routeConsoleToLog(): void {
  const next = logger().child({ source: "next" });
  console.log = console.info = (...args: unknown[]) => next.info(format(...args));
  console.debug = (...args: unknown[]) => next.debug(format(...args));
  console.warn = (...args: unknown[]) => next.warn(format(...args));
  console.error = (...args: unknown[]) => next.error(format(...args));
}

function describeSupervisorEvent(event: SupervisorEvent): string {
  switch (event.type) {
    case "exited": {
      const lastLines = event.output.trim().split("\n").slice(-3).join("\n  ");
      return `embedded PostgreSQL exited (code ${event.code}, signal ${event.signal}); restarting it${lastLines ? `\n  ${lastLines}` : ""}`;
    }
    case "restarted":
      return `embedded PostgreSQL restarted (attempt ${event.attempt})`;
    case "restart-failed":
      return `embedded PostgreSQL restart ${event.attempt} failed, next try in ${event.retryInMs} ms: ${event.error.message.split("\n").slice(0, 4).join(" | ")}`;
  }
}

/** The newest change under `dir`: a file written, or (by the directory's own time) one added, renamed or deleted. */
function newestSourceChange(dir: string): number {
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "generated" || entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSourceChange(full) : statSync(full).mtimeMs);
  }
  return newest;
}

function buildIsCurrent(): boolean {
  const buildId = path.join(root, ".next", "BUILD_ID");
  if (!existsSync(buildId)) return false;
  const builtAt = statSync(buildId).mtimeMs;
  return ["app", "server"].every((dir) => newestSourceChange(path.join(root, dir)) < builtAt);
}

async function buildNext(): Promise<void> {
  log("building the dashboard (first start or sources changed; takes ~30 s)…");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, "node_modules", "next", "dist", "bin", "next"), "build"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    });
    // Next's own output joins the server log as lines of its own, so stdout stays one JSON line per entry.
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
        if (line.trim()) lifecycleLogger().info({ source: "next build" }, line);
      });
    }
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`next build failed with exit code ${code}`))));
  });
}

// What a failed start must undo before exiting (a detached PostgreSQL would outlive us).
let embedded: EmbeddedDatabase | undefined;
let dataDirLock: { release(): void } | undefined;

async function main() {
  const port = configuredPort();
  const host = configuredHost();
  const adminToken = adminTokenSetting();
  checkAdminTokenSetting(adminToken);
  const graceMs = shutdownGraceMs();
  if (!databaseUrl()) {
    const dataDirPath = path.resolve(root, dataDir());
    mkdirSync(dataDirPath, { recursive: true, mode: 0o755 });
    dataDirLock = lockDataDir(path.join(dataDirPath, "server.pid"));
    log(`starting embedded PostgreSQL (data in ${dataDirPath})`);
    embedded = await startEmbeddedPostgres({
      dataDir: path.join(dataDirPath, "postgres"),
      port: embeddedDatabasePort(),
      // PostgreSQL's own output only shows when it fails; the cleanup and rotation notes always.
      log: (line) => {
        if (/rotated|orphaned|stale|previous run|leftovers/.test(line)) log(line);
      },
      onSupervisorEvent: (event) => lifecycleLogger().warn(describeSupervisorEvent(event)),
    });
    // Next's route handlers in this process build their client from it (server/db.ts getDb).
    process.env.DATABASE_URL = embedded.url;
    // Reached directly, never through a pooler: its statements may be named (server/db.ts).
    process.env.WORK_GRAPH_DB_PREPARED_STATEMENTS = "named";
    log(`embedded PostgreSQL on 127.0.0.1:${embedded.port} (\`npm run db:url\` prints its URL for other instances)`);
  }
  const database = databaseUrl()!;
  // Migrations take a session advisory lock: never through a transaction-mode pooler.
  const direct = directDatabaseUrl()!;
  await createDatabaseIfAbsent(direct);
  await refuseUnsupportedServer(direct);
  if (await hasPendingMigrations(direct)) await migrateDeploy(direct);

  const db = createDb(database, { poolSize: 4, namedStatements: preparedStatements() === "named", directConnectionString: direct });
  const newAdminToken = await ensureAdminToken(db, adminToken).catch(async (error: unknown) => {
    await db.$disconnect();
    await embedded?.stop();
    throw error;
  });
  ensureSecretKey();
  const slackSetup = slackSettings();
  const slack = slackSetup ? slackApp(slackSetup) : null;
  if (slack) await syncSlackAppWebhook(db, slack);
  const githubApiSetup = githubApiSettings();
  const github = githubApiSetup ? githubApi(githubApiSetup) : null;
  if (github) await syncGithubWebhook(db, github);

  process.env.NEXT_TELEMETRY_DISABLED = "1";
  let app: ReturnType<typeof import("next").default> | undefined;
  let handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;
  if (apiOnly) {
    handle = handleApiOnly;
  } else {
    if (!dev && !buildIsCurrent()) await buildNext();
    // Loaded only here: `--api-only` (the lifecycle tests, `npm run chaos`) starts without Next.
    const { default: next } = await import("next");
    routeConsoleToLog();
    app = next({ dev, dir: root, port });
    await app.prepare();
    const nextHandler = app.getRequestHandler();
    // The API skips Next's router (server/http/node-api.ts); pages and /api/session go to Next.
    handle = (req, res) => (servesApi(req.url) ? handleNodeApi(req, res) : nextHandler(req, res));
  }

  // In-flight requests are counted so a stop can wait for them (graceful drain).
  let inFlight = 0;
  let stopping = false;
  let onIdle: (() => void) | undefined;
  const server = http.createServer((req, res) => {
    inFlight++;
    if (stopping) res.setHeader("connection", "close");
    res.once("close", () => {
      inFlight--;
      if (stopping) {
        server.closeIdleConnections();
        if (inFlight === 0) onIdle?.();
      }
    });
    handle(req, res).catch((error: unknown) => {
      logger().error({ err: error }, "request failed");
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ reason: "INTERNAL", message: "internal error" }));
    });
  });
  // Longer than the idle timeout of the proxies and clients in front of us (load balancers' 60 s,
  // undici's keep-alive), so the client side closes an idle connection first: a server that
  // closes it as a request arrives makes that request fail with no way to know if it ran.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const sweepMs = sweepIntervalMs();
  const sweeper = startExpirySweeper(
    db,
    sweepMs,
    (error) => {
      if (isDatabaseUnavailable(error)) noteDatabaseDown();
      else logger().error({ err: error }, "expiry sweep failed");
    },
    () => {
      recordSweepPass(sweepMs);
      noteDatabaseUp();
    },
    [sweepOldGithubDeliveries],
  );
  const webhooks = startWebhookDispatcher(db, {
    publicUrl: publicUrl(),
    owned: { slack_app: slackAppDelivery(db, slack, publicUrl()), github: githubDelivery(db, github, publicUrl()) },
  });

  const url = `http://${host && host !== "0.0.0.0" && host !== "::" ? host : "localhost"}:${port}`;
  log(apiOnly ? `API only   ${url}/api/trpc, /api/metrics and /api/health (no dashboard)` : `dashboard  ${url}`);
  if (!apiOnly) log(`tRPC API   ${url}/api/trpc`);
  if (newAdminToken) {
    log(`admin token (shown once, keep it): ${newAdminToken}`);
    if (!apiOnly) log(`log in at ${url}/login with it, or create narrower tokens: see README "Tokens"`);
  }

  const withTimeout = (work: Promise<unknown>, ms: number) =>
    Promise.race([work.catch(() => {}), new Promise((resolve) => setTimeout(resolve, ms).unref())]);
  const stop = async (why: string) => {
    if (stopping) {
      log(`${why} again: closing the remaining connections now`);
      onIdle?.();
      return;
    }
    stopping = true;
    parentWatch.stop();
    // Whatever hangs below (a database that does not answer), the process still ends.
    setTimeout(() => {
      lifecycleLogger().error("stop took too long; exiting");
      process.exit(1);
    }, graceMs + 30_000).unref();
    log(`${why}: stopping (in-flight requests: ${inFlight}; waiting up to ${graceMs} ms for them)`);
    markDraining();
    server.close();
    server.closeIdleConnections();
    if (inFlight > 0) {
      await new Promise<void>((resolve) => {
        onIdle = resolve;
        setTimeout(resolve, graceMs).unref();
      });
    }
    if (inFlight > 0) lifecycleLogger().warn(`${inFlight} request(s) still running after ${graceMs} ms: closing them`);
    server.closeAllConnections();
    await withTimeout(sweeper.stop(), 5_000);
    await withTimeout(webhooks.stop(), 5_000);
    if (app) await withTimeout(app.close(), 5_000);
    await withTimeout(db.$disconnect(), 5_000);
    await withTimeout(getDb().$disconnect(), 5_000);
    await embedded?.stop();
    dataDirLock?.release();
    log("stopped");
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGHUP", () => void stop("SIGHUP"));
  const parentWatch = watchParents((pid) => void stop(`parent process ${pid} exited`));
}

const problems = configurationProblems();
if (problems.length > 0) {
  configurationErrorLogger().fatal({ problems }, `invalid configuration, not starting: ${problems.join("; ")}`);
  process.exit(1);
}

main().catch(async (error) => {
  logger().fatal(`failed to start: ${error instanceof Error ? error.message : String(error)}`);
  await embedded?.stop().catch(() => {});
  dataDirLock?.release();
  process.exit(1);
});
