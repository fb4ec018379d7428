import type { Db } from "./db";
import { isDatabaseUnavailable, noteDatabaseDown, noteDatabaseUp } from "./database/availability";
import { localMigrationNames } from "./database/migrate";
import { logger } from "./log";
import { appliedMigrationNames } from "./sql/migrations";

/**
 * GET /api/health/live and /api/health/ready (README "Operations"). Status codes are what a
 * load balancer or a Kubernetes probe understands: 200 ok, 503 not ready; bodies name the
 * failing check only, never a host, port or error text.
 */

/** What readiness knows of its instance (server/instance.ts): its sweep's last pass, and whether it is stopping. */
export function createHealthState() {
  return {
    lastSweepAt: null as number | null,
    sweepIntervalMs: 1000,
    draining: false,
    recordSweepPass(intervalMs: number): void {
      this.lastSweepAt = Date.now();
      this.sweepIntervalMs = intervalMs;
    },
    /** The server is stopping: readiness fails so balancers send new requests elsewhere. */
    markDraining(): void {
      this.draining = true;
    },
  };
}

export type HealthState = ReturnType<typeof createHealthState>;

export interface HealthReport {
  status: number;
  body: Record<string, unknown>;
}

export function liveness(): HealthReport {
  return { status: 200, body: { status: "ok" } };
}

let localMigrations: string[] | null = null;
const migrationNames = () => (localMigrations ??= localMigrationNames());

const CHECK_TIMEOUT_MS = 2_000;

async function migrationsApplied(db: Db): Promise<boolean> {
  const applied = new Set(await appliedMigrationNames(db));
  return migrationNames().every((name) => applied.has(name));
}

/**
 * Ready when: not draining, the database answers (within 2 s), every migration of this build
 * is applied, and this instance's expiry sweep passed within the last max(5 intervals, 10 s).
 */
export async function readiness({ db, health: state }: { db: Db; health: HealthState }): Promise<HealthReport> {
  let database: "ok" | "unavailable" = "ok";
  let migrations: "ok" | "pending" | "unknown" = "unknown";
  try {
    const applied = await Promise.race([
      migrationsApplied(db),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timeout exceeded when trying to connect")), CHECK_TIMEOUT_MS).unref()),
    ]);
    migrations = applied ? "ok" : "pending";
    noteDatabaseUp();
  } catch (error) {
    database = "unavailable";
    if (isDatabaseUnavailable(error)) noteDatabaseDown();
    else logger().error({ err: error }, "readiness check failed");
  }
  const sweepFresh = state.lastSweepAt !== null && Date.now() - state.lastSweepAt <= Math.max(5 * state.sweepIntervalMs, 10_000);
  const checks = { database, migrations, sweep: sweepFresh ? "ok" : "stale", draining: state.draining };
  const ready = database === "ok" && migrations === "ok" && sweepFresh && !state.draining;
  return { status: ready ? 200 : 503, body: { status: ready ? "ok" : "unavailable", checks } };
}

export function healthResponse(report: HealthReport): Response {
  return Response.json(report.body, { status: report.status, headers: { "cache-control": "no-store" } });
}
