import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client";

export type Db = PrismaClient;

export function createDb(connectionString: string, options: { poolSize?: number } = {}): Db {
  const adapter = new PrismaPg({ connectionString, max: options.poolSize ?? 20 });
  return new PrismaClient({ adapter });
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
