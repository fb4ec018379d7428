import { createHash } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client";

export type Db = PrismaClient;

/**
 * Named prepared statements: each distinct SQL text is parsed and planned once per
 * connection instead of on every call. The claim and release statements are large CTEs whose
 * planning otherwise costs more than their execution.
 */
const statementName = (query: { sql: string; argTypes?: unknown }) =>
  `wg_${createHash("sha1").update(query.sql).update(JSON.stringify(query.argTypes ?? null)).digest("base64url")}`;

const connectionStrings = new WeakMap<Db, string>();

export function createDb(connectionString: string, options: { poolSize?: number } = {}): Db {
  const adapter = new PrismaPg({ connectionString, max: options.poolSize ?? 20 }, { statementNameGenerator: statementName });
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
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error("DATABASE_URL is not set: start the app with `npm start`, which provides it");
    globalForDb.workGraphDb = createDb(url, { poolSize: Number(process.env.WORK_GRAPH_DB_POOL_SIZE ?? 20) });
  }
  return globalForDb.workGraphDb;
}
