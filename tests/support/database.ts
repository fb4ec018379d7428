import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject, vi } from "vitest";
import { createDb, type Db } from "../../server/db";
import { stopWakeups } from "../../server/realtime/wakeups";

export const adminDatabaseUrl = () => inject("adminDatabaseUrl");

export interface TestDatabase {
  name: string;
  url: string;
  db: Db;
  /** A raw pg client on the same database, for invariant tests and lock holders. */
  connect(): Promise<pg.Client>;
  close(): Promise<void>;
}

/** A fresh, migrated database for one test file (cloned from the template the global setup built). */
export async function createTestDatabase(options: { poolSize?: number } = {}): Promise<TestDatabase> {
  const name = `wg_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminDatabaseUrl() });
  await admin.connect();
  // CREATE DATABASE … TEMPLATE fails if another clone is being made at the same moment: retry.
  await vi.waitFor(() => admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject("templateDatabase")}`), { timeout: 15_000, interval: 100 });
  await admin.end();
  const url = adminDatabaseUrl().replace(/\/postgres$/, `/${name}`);
  const db = createDb(url, { poolSize: options.poolSize ?? 30 });
  const clients: pg.Client[] = [];
  return {
    name,
    url,
    db,
    async connect() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((client) => client.end().catch(() => {})));
      await stopWakeups(db);
      await db.$disconnect();
    },
  };
}
