import type pg from "pg";
import type { TestDatabase } from "./database";
import { callerAs } from "./app";

/** Operator + a factory of agents (one token per worker id) on a test database. */
export async function actors(database: TestDatabase) {
  const operator = await callerAs(database.db, "operator");
  const admin = await callerAs(database.db, "admin");
  const agents = new Map<string, Awaited<ReturnType<typeof callerAs>>>();
  return {
    operator: operator.api,
    admin: admin.api,
    async agent(workerId: string) {
      if (!agents.has(workerId)) agents.set(workerId, await callerAs(database.db, "agent", workerId));
      return agents.get(workerId)!.api;
    },
  };
}

/** Inserts `count` ready root items with ids `${prefix}-0001`… in one statement. */
export async function insertReadyItems(client: pg.Client, prefix: string, count: number, priority = 0) {
  await client.query(
    `INSERT INTO work_items (id, title, priority) SELECT $1 || '-' || lpad(g::text, 5, '0'), 'item ' || g, $3 FROM generate_series(1, $2) g`,
    [prefix, count, priority],
  );
}

/** Waits until the database clock has passed `iso` (a lease's expiresAt). */
export async function waitUntilDatabaseTime(client: pg.Client, iso: string) {
  for (;;) {
    const { rows } = await client.query<{ passed: boolean }>("SELECT clock_timestamp() > $1::timestamptz AS passed", [iso]);
    if (rows[0]!.passed) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const reasonOf = (error: unknown) => (error as { cause?: { reason?: string } }).cause?.reason;
export const detailOf = (error: unknown) => (error as { cause?: { detail?: Record<string, unknown> } }).cause?.detail;

/** Runs `promise` expecting a WorkGraphError; returns { reason, detail }. */
export async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    return { reason: reasonOf(error), detail: detailOf(error) ?? {} };
  }
  throw new Error("expected the call to be refused");
}
