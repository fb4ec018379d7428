import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { databaseConnectTimeoutMs } from "../config";
import { appliedMigrationNamesIfAny } from "../sql/migrations";

export interface PrismaCliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * The project root: the directory holding prisma.config.ts. Found from this file's own
 * location (so tests and scripts work from any cwd), falling back to the cwd for bundled
 * builds where this file no longer sits at server/database/.
 */
export function projectRoot(): string {
  const candidates = [process.cwd()];
  try {
    candidates.unshift(fileURLToPath(new URL("../../", import.meta.url)));
  } catch {
    // import.meta.url is not a file: URL in some bundles.
  }
  const root = candidates.find((dir) => existsSync(path.join(dir, "prisma.config.ts")));
  if (!root) throw new Error(`prisma.config.ts not found in ${candidates.join(" or ")}`);
  return root;
}

/**
 * Runs the project's own Prisma CLI (node_modules/prisma) in the project root, with
 * DATABASE_URL set. prisma.config.ts points it at the offline schema engine. Never throws
 * for a non-zero exit code: callers decide (e.g. `migrate diff --exit-code` exits 2).
 */
export function runPrismaCli(args: string[], options: { databaseUrl?: string; timeoutMs?: number } = {}): Promise<PrismaCliResult> {
  const root = projectRoot();
  const cli = path.join(root, "node_modules", "prisma", "build", "index.js");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // No update check or telemetry: there is no internet, and output should be stable.
    CHECKPOINT_DISABLE: "1",
    PRISMA_HIDE_UPDATE_MESSAGE: "1",
    NO_COLOR: "1",
  };
  if (options.databaseUrl !== undefined) env.DATABASE_URL = options.databaseUrl;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [cli, ...args],
      { cwd: root, env, timeout: options.timeoutMs ?? 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") {
          // Could not start, or killed by the timeout.
          reject(new Error(`prisma ${args.join(" ")} failed to run: ${error.message}\n${stdout}${stderr}`));
          return;
        }
        resolve({ exitCode: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });
}

/**
 * Applies every pending migration of prisma/migrations with Prisma's own `migrate deploy`,
 * creating the database if it does not exist. Idempotent: a second run applies nothing.
 * Throws with the CLI's output when it fails.
 */
export async function migrateDeploy(databaseUrl: string): Promise<void> {
  const result = await runPrismaCli(["migrate", "deploy"], { databaseUrl });
  if (result.exitCode !== 0) {
    throw new Error(`prisma migrate deploy failed (exit code ${result.exitCode}):\n${result.stdout}${result.stderr}`);
  }
}

/** Names of the migrations this checkout ships (prisma/migrations/<name>/). */
export function localMigrationNames(): string[] {
  return readdirSync(path.join(projectRoot(), "prisma", "migrations"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

/**
 * True unless every local migration is recorded as applied. Lets a restart skip the Prisma CLI
 * (seconds of CPU) when there is nothing to do; any doubt (no database yet, no table) says true.
 */
export async function hasPendingMigrations(databaseUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: databaseConnectTimeoutMs() });
  try {
    await client.connect();
    const names = await appliedMigrationNamesIfAny(client);
    if (names === null) return true;
    const applied = new Set(names);
    return !localMigrationNames().every((name) => applied.has(name));
  } catch {
    return true;
  } finally {
    await client.end().catch(() => {});
  }
}
