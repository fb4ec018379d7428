import { createHash } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client";
import { statementTimeoutMs } from "./http/limits";

export type Db = PrismaClient;

/**
 * Named prepared statements: each distinct SQL text is parsed and planned once per
 * connection instead of on every call. The claim and release statements are large CTEs whose
 * planning otherwise costs more than their execution.
 */
const statementName = (query: { sql: string; argTypes?: unknown }) =>
  `wg_${createHash("sha1").update(query.sql).update(JSON.stringify(query.argTypes ?? null)).digest("base64url")}`;

/** `statementTimeoutMs` (0 or unset: none) bounds every statement on these connections (sent as a startup parameter). */
export function createDb(connectionString: string, options: { poolSize?: number; statementTimeoutMs?: number } = {}): Db {
  const timeout = options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {};
  const adapter = new PrismaPg({ connectionString, max: options.poolSize ?? 20, ...timeout }, { statementNameGenerator: statementName });
  return new PrismaClient({ adapter });
}

const globalForDb = globalThis as unknown as { workGraphDb?: Db };

/** The process-wide client, built once from DATABASE_URL (set by scripts/start.ts or the environment). */
export function getDb(): Db {
  if (!globalForDb.workGraphDb) {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error("DATABASE_URL is not set: start the app with `npm start`, which provides it");
    globalForDb.workGraphDb = createDb(url, { poolSize: Number(process.env.WORK_GRAPH_DB_POOL_SIZE ?? 20), statementTimeoutMs: statementTimeoutMs() });
  }
  return globalForDb.workGraphDb;
}
