import type pg from "pg";

/*
 * Statements on the embedded PostgreSQL cluster itself (server/database/embedded.ts), run as its
 * superuser on the `postgres` database before the application's database exists.
 */

/** Sets `role`'s password (the role name is a fixed identifier, the password a literal). */
export async function setRolePassword(client: pg.Client, role: string, password: string): Promise<void> {
  await client.query(`ALTER ROLE ${role} PASSWORD ${client.escapeLiteral(password)}`);
}

/** Creates database `name` unless it exists. */
export async function createDatabaseIfMissing(client: pg.Client, name: string): Promise<void> {
  const existing = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
  if (existing.rowCount === 0) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
}

/** Creates database `name`, owned by the connected role; fails with 42P04 (or 23505 in a race) when it exists. */
export async function createDatabase(client: pg.Client, name: string): Promise<void> {
  await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
}
