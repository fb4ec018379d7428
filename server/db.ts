import { createHash } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "./generated/prisma/client";
import { createAuthCache, type AuthCache } from "./auth/auth-cache";
import type { Metrics } from "./metric-registry";

/**
 * Named prepared statements (only with `namedStatements`: a direct connection, or a pooler that
 * keeps protocol-level prepared statements): each distinct SQL text is parsed and planned once
 * per connection instead of on every call. Through a transaction-mode pooler such as PgBouncer
 * 1.18 they break (the next statement may land on another server connection), so by default
 * every statement runs unnamed. The driver keeps a named statement for the connection's
 * lifetime, so only the application's fixed texts get a name: a text with a long parameter
 * list (a VALUES list that grows with its input) runs unnamed, and once MAX_NAMED_STATEMENTS
 * texts are named every further new text runs unnamed too. That bounds each connection's
 * statement cache whatever the inputs.
 */
// The adapter's type says string, but it hands the name to pg, where none means unnamed.
export const MAX_NAMED_STATEMENTS = 300;
const MAX_NAMED_PARAMETERS = 40;
const namedStatements = new Map<string, string>();

export function statementName(query: { sql: string; args?: unknown[]; argTypes?: unknown }): string | undefined {
  if ((query.args?.length ?? 0) > MAX_NAMED_PARAMETERS) return undefined;
  const text = `${query.sql}\u0000${JSON.stringify(query.argTypes ?? null)}`;
  const known = namedStatements.get(text);
  if (known !== undefined || namedStatements.size >= MAX_NAMED_STATEMENTS) return known;
  const name = `wg_${createHash("sha1").update(text).digest("base64url")}`;
  namedStatements.set(text, name);
  return name;
}

/** What pg's Connection does for a cancel request (its types leave these out). */
interface CancelConnection {
  on(event: "error" | "connect", listener: () => void): void;
  connect(portOrSocket: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
}

type QueryCallback = (error: Error | null, result: unknown) => void;

/**
 * A pg client whose statements are cancelled after `timeoutMs` with PostgreSQL's cancel request
 * (SQLSTATE 57014, as statement_timeout gives), the way JDBC's query timeout works. Unlike the
 * `statement_timeout` startup parameter or a session `SET`, this passes through a
 * transaction-mode pooler: PgBouncer refuses the parameter, would leak the `SET` to other
 * clients, and forwards a cancel request to the server connection running our statement.
 */
function clientWithStatementTimeout(timeoutMs: number): typeof pg.Client {
  return class TimedClient extends pg.Client {
    // The adapter calls query({ text, values, … }), through pg's Pool with a callback; other forms pass through.
    override query(...args: unknown[]): never {
      const [config, second, third] = args;
      const plain = typeof config === "object" && config !== null && typeof (config as { submit?: unknown }).submit !== "function";
      if (!plain) return (super.query as (...a: unknown[]) => never)(...args);
      const values = typeof second === "function" ? undefined : (second as unknown[] | undefined);
      const callback = (typeof second === "function" ? second : third) as QueryCallback | undefined;
      const submit = (done: QueryCallback) => {
        const query = new pg.Query(config as pg.QueryConfig, values) as pg.Query & { callback: QueryCallback };
        const timer = setTimeout(() => this.cancelRunningStatement(), timeoutMs);
        query.callback = (error, result) => {
          clearTimeout(timer);
          done(error, result);
        };
        (super.query as (query: pg.Query) => void)(query);
      };
      if (callback) return submit(callback) as never;
      return new Promise((resolve, reject) => submit((error, result) => (error ? reject(error) : resolve(result)))) as never;
    }

    private cancelRunningStatement(): void {
      const self = this as unknown as { processID: number | null; secretKey: number | null; host: string; port: number };
      if (self.processID === null || self.secretKey === null) return;
      const connection = new pg.Connection() as unknown as CancelConnection;
      connection.on("error", () => {});
      connection.on("connect", () => connection.cancel(self.processID!, self.secretKey!));
      if (self.host.startsWith("/")) connection.connect(`${self.host}/.s.PGSQL.${self.port}`);
      else connection.connect(self.port, self.host);
    }
  };
}

export interface DbOptions {
  poolSize?: number;
  /** Longest wait for a connection (a new one, or a free one of the pool). */
  connectTimeoutMs: number;
  /** Cancels any statement running longer (0 or unset: none); see clientWithStatementTimeout. */
  statementTimeoutMs?: number;
  /** Name fixed statements (see statementName); only for a connection that keeps them. */
  namedStatements?: boolean;
  /** Send the hot path's statements through Prisma too (queryHotPath): only for the benchmark's before/after. */
  hotPathThroughPrisma?: boolean;
  /** Where LISTEN goes (server/realtime): a direct connection, not a transaction-mode pooler; default `connectionString`. */
  directConnectionString?: string;
}

/**
 * What every statement of one client shares, reached from the client and from each of its
 * transactions as `$executor()`: the pg pool the hot path's autocommit statements go straight to
 * (server/sql/hot-path.ts), the effects waiting for each open transaction's commit
 * (server/database/transaction.ts), and what the instance does after commits
 * (server/instance.ts: its metrics, and `onQuietCommit`).
 */
export interface Executor {
  /** The client createDb made; its transactions carry the same executor. */
  client: Db;
  /** Null: the hot path goes through Prisma (hotPathThroughPrisma). */
  hotPath: { pool: pg.Pool; named: boolean } | null;
  directConnectionString: string;
  /** Effects to run once each open transaction commits (server/database/transaction.ts). */
  commitEffects: Map<object, (() => void)[]>;
  metrics: Metrics;
  onQuietCommit: () => void;
  /** Recently authenticated tokens (server/auth/tokens.ts). */
  authentications: AuthCache;
}

function extendedClient(client: PrismaClient, executor: Omit<Executor, "client">) {
  return client.$extends({ client: { $executor: () => executor as Executor } });
}

export type Db = ReturnType<typeof extendedClient>;

/**
 * The client of one instance (server/instance.ts builds it) on `connectionString`, pooler-safe: no startup parameters (the statement timeout is
 * enforced by cancel requests), no session state, unnamed statements unless asked.
 */
export function createDb(connectionString: string, options: DbOptions, metrics: Metrics): Db {
  const timedClient = options.statementTimeoutMs ? { Client: clientWithStatementTimeout(options.statementTimeoutMs) } : {};
  const pool = new pg.Pool({ connectionString, max: options.poolSize ?? 20, connectionTimeoutMillis: options.connectTimeoutMs, ...timedClient });
  // An idle connection the server dropped (a restart): the next checkout opens a new one.
  pool.on("error", () => {});
  const adapter = new PrismaPg(pool, {
    disposeExternalPool: true,
    ...(options.namedStatements ? { statementNameGenerator: statementName as (query: { sql: string }) => string } : {}),
  });
  const executor: Omit<Executor, "client"> & { client?: Db } = {
    hotPath: options.hotPathThroughPrisma ? null : { pool, named: options.namedStatements ?? false },
    directConnectionString: options.directConnectionString ?? connectionString,
    commitEffects: new Map(),
    metrics,
    onQuietCommit: () => {},
    authentications: createAuthCache(),
  };
  const db = extendedClient(new PrismaClient({ adapter }), executor);
  executor.client = db;
  return db;
}
