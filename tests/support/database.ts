import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject, vi } from "vitest";
import { databaseConnectTimeoutMs } from "../../server/config";
import type { Db } from "../../server/db";
import { createInstance, type Instance, type InstanceOptions } from "../../server/instance";

export const adminDatabaseUrl = () => inject("adminDatabaseUrl");

/** An app instance on `url` as the tests build them. */
export const testInstance = (url: string, options: Partial<InstanceOptions> = {}): Instance =>
  createInstance({ databaseUrl: url, connectTimeoutMs: databaseConnectTimeoutMs(), ...options });

export interface TestDatabase {
  name: string;
  url: string;
  instance: Instance;
  /** `instance.db` */
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
  const instance = testInstance(url, { poolSize: options.poolSize ?? 30 });
  const clients: pg.Client[] = [];
  return {
    name,
    url,
    instance,
    db: instance.db,
    async connect() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((client) => client.end().catch(() => {})));
      await instance.close();
    },
  };
}
