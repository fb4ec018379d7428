import type pg from "pg";
import type { Prisma } from "../generated/prisma/client";
import { statementName, type Db } from "../db";

/**
 * One autocommit statement of the hot path (a claim, a renewal, a release: every agent's
 * cycle) sent on `db`'s own pg pool instead of through Prisma's raw-query pipeline, which cost
 * about 0.5 ms of CPU per statement under load (BENCHMARKS.md "Issue 31"). The same text,
 * parameters, statement name, pool, statement timeout and errors (pg's, with the SQLSTATE
 * that server/database/transaction.ts reads); rows as pg parses them, so these statements
 * return only JSON, text, uuid, integer and timestamptz columns, which both parse alike. In a
 * transaction (`Tx`), or without a pool of its own (hotPathThroughPrisma), it goes through Prisma.
 */
export async function queryHotPath<T>(db: Pick<Db, "$queryRaw" | "$executor">, query: Prisma.Sql): Promise<T[]> {
  const { client, hotPath: direct } = db.$executor();
  if (db !== client || !direct) return db.$queryRaw<T[]>(query);
  const name = direct.named ? statementName({ sql: query.text, args: query.values }) : undefined;
  const result = await direct.pool.query<T & pg.QueryResultRow>({ name, text: query.text, values: query.values as unknown[] });
  return result.rows;
}
