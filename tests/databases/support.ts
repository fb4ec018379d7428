import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { chown, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "../../server/database/embedded";

/*
 * Debian's PostgreSQL 15 and PgBouncer, run by the tests themselves: a private cluster in a temp
 * dir and a PgBouncer in transaction mode in front of it, on loopback ports, as the OS user
 * `postgres` when we are root (neither runs as root). .ci/run installs both when missing.
 */

const run = promisify(execFile);

export const POSTGRES_15_BIN = "/usr/lib/postgresql/15/bin";
export const PGBOUNCER = "/usr/sbin/pgbouncer";

/** Why the real-server suites cannot run here, or null. In CI a missing binary is a failure, elsewhere a skip. */
export function missingBinaries(): string | null {
  const missing = [path.join(POSTGRES_15_BIN, "postgres"), PGBOUNCER].filter((file) => !existsSync(file));
  if (missing.length === 0) return null;
  const message = `Debian's PostgreSQL 15 and PgBouncer are needed (missing: ${missing.join(", ")}; apt-get install postgresql-15 pgbouncer)`;
  if (process.env.CI === "true") throw new Error(message);
  console.warn(`skipped: ${message}`);
  return message;
}

/** uid/gid to run the servers as: `postgres` when we are root, else ourselves. */
async function serverUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const { stdout } = await run("id", ["-u", "postgres"]);
  const { stdout: group } = await run("id", ["-g", "postgres"]);
  return { uid: Number(stdout.trim()), gid: Number(group.trim()) };
}

async function waitForConnection(url: string, child: ChildProcess, output: () => string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode}:\n${output()}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query("SELECT 1");
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => {});
    }
  }
  throw new Error(`no connection to ${url} after 30 s:\n${output()}`);
}

function spawnLogged(command: string, args: string[], user: { uid: number; gid: number } | undefined) {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...user });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8_000)));
  child.stderr!.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8_000)));
  return { child, output: () => output };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGINT"); // PostgreSQL: fast shutdown; PgBouncer: safe shutdown
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

export interface Postgres15 {
  port: number;
  /** postgres://postgres@127.0.0.1:port/<database> (trust on loopback: a private test cluster). */
  url(database?: string, user?: string): string;
  bin(name: string): string;
  stop(): Promise<void>;
}

/** A fresh PostgreSQL 15 cluster (initdb in a temp dir, fsync off), running until stop(). */
export async function startPostgres15(): Promise<Postgres15> {
  const user = await serverUser();
  const dir = await mkdtemp(path.join(os.tmpdir(), "wg-pg15-"));
  if (user) await chown(dir, user.uid, user.gid);
  const dataDir = path.join(dir, "data");
  await run(path.join(POSTGRES_15_BIN, "initdb"), ["-D", dataDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"], { ...user });
  const port = await freePort();
  const server = spawnLogged(
    path.join(POSTGRES_15_BIN, "postgres"),
    ["-D", dataDir, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
    user,
  );
  const url = (database = "postgres", role = "postgres") => `postgres://${role}@127.0.0.1:${port}/${database}`;
  await waitForConnection(url(), server.child, server.output);
  return {
    port,
    url,
    bin: (name) => path.join(POSTGRES_15_BIN, name),
    async stop() {
      await stopChild(server.child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface PgBouncer {
  port: number;
  url(database: string, user?: string): string;
  stop(): Promise<void>;
}

/**
 * PgBouncer in transaction mode in front of `postgres` (every database; `roles` may log in,
 * trust on loopback), from an ini file.
 */
export async function startPgBouncer(postgres: Postgres15, options: { poolSize?: number; roles?: string[] } = {}): Promise<PgBouncer> {
  const user = await serverUser();
  const dir = await mkdtemp(path.join(os.tmpdir(), "wg-pgbouncer-"));
  if (user) await chown(dir, user.uid, user.gid);
  const port = await freePort();
  const ini = path.join(dir, "pgbouncer.ini");
  await writeFile(path.join(dir, "users.txt"), ["postgres", ...(options.roles ?? [])].map((role) => `"${role}" ""\n`).join(""));
  await writeFile(
    ini,
    [
      "[databases]",
      `* = host=127.0.0.1 port=${postgres.port}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${path.join(dir, "users.txt")}`,
      "pool_mode = transaction",
      `default_pool_size = ${options.poolSize ?? 8}`,
      "max_client_conn = 500",
      "server_reset_query =",
      `pidfile = ${path.join(dir, "pgbouncer.pid")}`,
      "",
    ].join("\n"),
  );
  if (user) await chown(ini, user.uid, user.gid);
  const bouncer = spawnLogged(PGBOUNCER, [ini], user);
  const url = (database: string, role = "postgres") => `postgres://${role}@127.0.0.1:${port}/${database}`;
  await waitForConnection(url("postgres"), bouncer.child, bouncer.output);
  return {
    port,
    url,
    async stop() {
      await stopChild(bouncer.child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
