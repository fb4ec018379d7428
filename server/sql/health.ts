import type { Db } from "../db";

/* What the health checks ask the database. */

/** The database clock (a round trip that proves the database answers). */
export async function databaseNow(db: Db): Promise<Date> {
  const [row] = await db.$queryRaw<{ now: Date }[]>`SELECT work_graph_now() AS now`;
  return row!.now;
}
