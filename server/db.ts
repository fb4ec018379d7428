import { createHash } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client";
import { databaseConnectTimeoutMs, databasePoolSize, databaseUrl, statementTimeoutMs } from "./config";

export type Db = PrismaClient;

/**
 * Named prepared statements: each distinct SQL text is parsed and planned once per
 * connection instead of on every call. The claim and release statements are large CTEs whose
 * planning otherwise costs more than their execution. The driver keeps a named statement for
 * the connection's lifetime, so only the application's fixed texts get a name: a text with a
 * long parameter list (a VALUES list that grows with its input) runs unnamed, and once
 * MAX_NAMED_STATEMENTS texts are named every further new text runs unnamed too. That bounds
 * each connection's statement cache whatever the inputs.
 */
// The adapter's type says string, but it hands the name to pg, where none means unnamed.
export const MAX_NAMED_STATEMENTS = 300;
const MAX_NAMED_PARAMETERS = 40;
const namedStatements = new Map<string, string>();

export function statementName(query: { sql: string; args?: unknown[]; argTypes?: unknown }): string | undefined {
  if ((query.args?.length ?? 0) > MAX_NAMED_PARAMETERS) return undefined;
  const text = `${query.sql}\u0000${JSON.stringify(query.argTypes ?? null)}`;
  const known = namedStatements.get(text);
  if (known !== undefined || namedStatements.size >= MAX_NAMED_STATEMENTS) return known;
  const name = `wg_${createHash("sha1").update(text).digest("base64url")}`;
  namedStatements.set(text, name);
  return name;
}

const connectionStrings = new WeakMap<Db, string>();

/**
 * `statementTimeoutMs` (0 or unset: none) bounds every statement on these connections (sent as a
 * startup parameter); databaseConnectTimeoutMs bounds the wait for a connection.
 */
export function createDb(connectionString: string, options: { poolSize?: number; statementTimeoutMs?: number } = {}): Db {
  const timeout = options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {};
  const adapter = new PrismaPg(
    { connectionString, max: options.poolSize ?? 20, connectionTimeoutMillis: databaseConnectTimeoutMs(), ...timeout },
    { statementNameGenerator: statementName as (query: { sql: string }) => string },
  );
  const db = new PrismaClient({ adapter });
  connectionStrings.set(db, connectionString);
  return db;
}

/** The database `db` talks to (server/realtime opens its LISTEN connection there). */
export function connectionStringOf(db: Db): string {
  const url = connectionStrings.get(db);
  if (!url) throw new Error("this client was not made by createDb");
  return url;
}

const globalForDb = globalThis as unknown as { workGraphDb?: Db };

/** The process-wide client, built once from DATABASE_URL (set by scripts/start.ts or the environment). */
export function getDb(): Db {
  if (!globalForDb.workGraphDb) {
    const url = databaseUrl();
    if (!url) throw new Error("DATABASE_URL is not set: start the app with `npm start`, which provides it");
    globalForDb.workGraphDb = createDb(url, { poolSize: databasePoolSize(), statementTimeoutMs: statementTimeoutMs() });
  }
  return globalForDb.workGraphDb;
}
