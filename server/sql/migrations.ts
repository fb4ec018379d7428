import type pg from "pg";
import type { Db } from "../db";

/* Which migrations the database has applied (Prisma's _prisma_migrations table). */

const APPLIED_MIGRATIONS = "SELECT migration_name AS name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL";

/** The migrations applied (finished, not rolled back), through the app's client (the readiness check). */
export async function appliedMigrationNames(db: Db): Promise<string[]> {
  const rows = await db.$queryRawUnsafe<{ name: string }[]>(APPLIED_MIGRATIONS);
  return rows.map((row) => row.name);
}

/** The same through a plain connection before the app starts; null when there is no migrations table yet. */
export async function appliedMigrationNamesIfAny(client: pg.Client): Promise<string[] | null> {
  const table = await client.query<{ exists: boolean }>("SELECT to_regclass('_prisma_migrations') IS NOT NULL AS exists");
  if (!table.rows[0]?.exists) return null;
  const { rows } = await client.query<{ name: string }>(APPLIED_MIGRATIONS);
  return rows.map((row) => row.name);
}
