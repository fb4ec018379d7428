/**
 * `npm start`: database (embedded unless DATABASE_URL), migrations, admin token, Next build
 * when missing or stale, the HTTP server with the dashboard and /api/trpc, and the expiry
 * sweep. Ctrl-C stops all of it cleanly.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import next from "next";
import { ensureAdminToken } from "../server/auth/tokens";
import { sweepIntervalMs } from "../server/config";
import { createDb } from "../server/db";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../server/database/embedded";
import { migrateDeploy, projectRoot } from "../server/database/migrate";
import { startExpirySweeper } from "../server/operations/sweep";
import { logger } from "../server/log";

const root = projectRoot();
const dev = process.argv.includes("--dev");
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST; // unset: every interface, IPv4 and IPv6
const log = (message: string) => console.log(`[work-graph] ${message}`);

function newestSourceChange(dir: string): number {
  let newest = 0;
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
      stdio: "inherit",
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`next build failed with exit code ${code}`))));
  });
}

async function main() {
  let embedded: EmbeddedDatabase | undefined;
  if (!process.env.DATABASE_URL) {
    const dataDir = path.resolve(root, process.env.WORK_GRAPH_DATA_DIR ?? ".work-graph");
    log(`starting embedded PostgreSQL (data in ${dataDir})`);
    embedded = await startEmbeddedPostgres({ dataDir: path.join(dataDir, "postgres") });
    process.env.DATABASE_URL = embedded.url;
  }
  const databaseUrl = process.env.DATABASE_URL!;
  await migrateDeploy(databaseUrl);

  const db = createDb(databaseUrl, { poolSize: 4 });
  const newAdminToken = await ensureAdminToken(db, process.env.WORK_GRAPH_ADMIN_TOKEN);

  if (!dev && !buildIsCurrent()) await buildNext();
  process.env.NEXT_TELEMETRY_DISABLED = "1";
  const app = next({ dev, dir: root, port });
  await app.prepare();
  const handle = app.getRequestHandler();
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const sweeper = startExpirySweeper(db, sweepIntervalMs(), (error) => logger().error({ err: error }, "expiry sweep failed"));

  const url = `http://${host && host !== "0.0.0.0" && host !== "::" ? host : "localhost"}:${port}`;
  log(`dashboard  ${url}`);
  log(`tRPC API   ${url}/api/trpc`);
  if (newAdminToken) {
    log(`admin token (shown once, keep it): ${newAdminToken}`);
    log(`log in at ${url}/login with it, or create narrower tokens: see README "Tokens"`);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await sweeper.stop();
    await app.close().catch(() => {});
    await db.$disconnect();
    await embedded?.stop();
    log("stopped");
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error) => {
  console.error("[work-graph] failed to start:", error);
  process.exit(1);
});
