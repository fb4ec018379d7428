import type { Db } from "../db";

/* What the health checks ask the database. */

/** The migrations applied to the database (finished, not rolled back). */
export async function appliedMigrationNames(db: Db): Promise<string[]> {
  const rows = await db.$queryRaw<{ name: string }[]>`
    SELECT migration_name AS name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;
  return rows.map((row) => row.name);
}

/** The database clock (a round trip that proves the database answers). */
export async function databaseNow(db: Db): Promise<Date> {
  const [row] = await db.$queryRaw<{ now: Date }[]>`SELECT statement_timestamp() AS now`;
  return row!.now;
}
