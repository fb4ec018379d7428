import pg from "pg";
import { databaseConnectTimeoutMs } from "../config";
import { createDatabase } from "../sql/cluster";
import { sqlState } from "./transaction";

const INVALID_CATALOG_NAME = "3D000";
const DUPLICATE_DATABASE = "42P04";
const UNIQUE_VIOLATION = "23505";
const INSUFFICIENT_PRIVILEGE = "42501";

/** Databases every PostgreSQL cluster has, to connect to while the application's does not exist yet. */
const MAINTENANCE_DATABASES = ["postgres", "template1"];

async function connected<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: databaseConnectTimeoutMs() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Creates the database `url` names when it does not exist yet, as the role of `url`. Several
 * instances starting together on one absent database all succeed: whichever creates it first wins,
 * the others find it there. A role that may not create databases gets a message saying what to
 * run instead. Any other connection failure is left to the caller's first real connection.
 */
export async function createDatabaseIfAbsent(url: string): Promise<void> {
  try {
    await connected(url, async () => {});
    return;
  } catch (error) {
    if (sqlState(error) !== INVALID_CATALOG_NAME) return;
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const role = decodeURIComponent(target.username);
  let lastError: unknown;
  for (const maintenance of MAINTENANCE_DATABASES) {
    const maintenanceUrl = new URL(url);
    maintenanceUrl.pathname = `/${maintenance}`;
    try {
      await connected(maintenanceUrl.href, (client) => createDatabase(client, name));
      return;
    } catch (error) {
      const state = sqlState(error);
      if (state === DUPLICATE_DATABASE || state === UNIQUE_VIOLATION) return;
      if (state === INSUFFICIENT_PRIVILEGE) {
        throw new Error(
          `database "${name}" does not exist, and role "${role}" may not create it: create it once as a role that may ` +
            `(psql: CREATE DATABASE "${name.replaceAll('"', '""')}" OWNER "${role.replaceAll('"', '""')}";), or point DATABASE_URL at an existing database`,
        );
      }
      lastError = error;
    }
  }
  throw new Error(
    `database "${name}" does not exist and could not be created from the ${MAINTENANCE_DATABASES.join(" or ")} database ` +
      `(${lastError instanceof Error ? lastError.message : String(lastError)}): create it first, or point DATABASE_URL at an existing database`,
  );
}
