import type pg from "pg";
import { test } from "vitest";
import { createTestDatabase, testInstance, type TestDatabase } from "./database";
import { callerAs, startTestServer } from "./app";

export { advanceClock, advanceClockPast, databaseClock } from "./clock";

/** Operator + a factory of agents (one token per worker id) on a test database. */
export async function actors(database: TestDatabase) {
  const operator = await callerAs(database.instance, "operator");
  const admin = await callerAs(database.instance, "admin");
  const agents = new Map<string, Awaited<ReturnType<typeof callerAs>>>();
  return {
    operator: operator.api,
    admin: admin.api,
    async agent(workerId: string) {
      if (!agents.has(workerId)) agents.set(workerId, await callerAs(database.instance, "agent", workerId));
      return agents.get(workerId)!.api;
    },
  };
}

export type Actors = Awaited<ReturnType<typeof actors>>;

/**
 * Vitest's `test` with a database of its own and what most files build on it, each made on
 * first use and closed after the last test: `database` (a clone of the migrated template),
 * `sql` (a raw pg client on it), `people` (operator, admin, agents by worker id) and `server`
 * (the API over HTTP on a random port). `scope: "test"` gives every test a fresh database
 * (for files whose assertions need a database holding only that test's rows).
 */
export function databaseTest(options: { poolSize?: number; scope?: "file" | "test" } = {}) {
  // The fixtures' types are the same in both scopes; only their lifetime differs.
  const scope = { scope: options.scope ?? "file" } as { scope: "file" };
  return test
    .extend("database", scope, async ({}, { onCleanup }) => {
      const database = await createTestDatabase({ poolSize: options.poolSize });
      onCleanup(() => database.close());
      return database;
    })
    .extend("sql", scope, ({ database }) => database.connect()) // closed with the database
    .extend("people", scope, ({ database }) => actors(database))
    .extend("server", scope, async ({ database }, { onCleanup }) => {
      const server = await startTestServer(database.instance);
      onCleanup(() => server.close());
      return server;
    });
}

/**
 * `databaseTest` plus instance B: a second instance on the same database with its own listener
 * (`instanceB`, its client `dbB`) and HTTP server (`serverB`), so a wake-up has to travel through PostgreSQL.
 */
export function twoInstanceTest() {
  return databaseTest()
    .extend("instanceB", { scope: "file" }, ({ database }, { onCleanup }) => {
      const instance = testInstance(database.url, { poolSize: 5 });
      onCleanup(() => instance.close());
      return instance;
    })
    .extend("dbB", { scope: "file" }, ({ instanceB }) => instanceB.db)
    .extend("serverB", { scope: "file" }, async ({ instanceB }, { onCleanup }) => {
      const server = await startTestServer(instanceB);
      onCleanup(() => server.close());
      return server;
    });
}

/**
 * Backends of this database waiting for a heavyweight lock (a lock request not granted),
 * optionally only of one lock type or one application_name. Tests poll it to let a racer go
 * once the others are queued behind a lock, never after a fixed sleep.
 */
export async function lockWaiters(client: pg.Client, only: { locktype?: "advisory" | "tuple" | "transactionid" | "relation"; applicationName?: string } = {}) {
  // Inside a transaction pg_stat_activity is one snapshot: a backend that connected later would never show.
  await client.query("SELECT pg_stat_clear_snapshot()");
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE NOT l.granted AND a.datname = current_database()
        AND ($1::text IS NULL OR l.locktype = $1) AND ($2::text IS NULL OR a.application_name = $2)`,
    [only.locktype ?? null, only.applicationName ?? null],
  );
  return rows[0]!.n;
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
