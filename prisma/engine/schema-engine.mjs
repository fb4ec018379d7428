#!/usr/bin/env node
// Offline stand-in for Prisma's native `schema-engine` binary (PostgreSQL only).
//
// The Prisma 7 CLI downloads a native schema engine on first use, which fails without
// internet. prisma.config.ts points PRISMA_SCHEMA_ENGINE_BINARY at this script instead. The
// CLI spawns it exactly like the native engine:
//   schema-engine [--datasource <json>] [--datamodels <path>]... [cli <command>]
// and, without `cli`, speaks JSON-RPC 2.0 over stdin/stdout, one message per line. Every
// request is forwarded to `SchemaEngine` from @prisma/schema-engine-wasm (Prisma's own
// WebAssembly build of the same engine) talking to PostgreSQL through @prisma/adapter-pg.
// Versions are pinned in package.json: an upgrade of any prisma package must re-run
// tests/database/drift.test.ts and the checks in README.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory, ColumnTypeEnum } from "@prisma/driver-adapter-utils";
import pg from "pg";

const args = parseArgs(process.argv.slice(2));
const charColumns = new WeakMap(); // query object -> indexes of its "char" columns (see patchQueryable)
const shadowDatabases = new Set(); // URLs of throw-away shadow databases still alive
const datasource = args.datasource ? JSON.parse(args.datasource) : {};

// --- `cli` subcommands: run by `migrate deploy` & co. outside JSON-RPC to make sure the
// database exists. Success is exit code 0. On failure the CLI ignores the first stderr
// line and parses every further line as a JSON log record, looking for an ERROR record of
// target `schema_engine::logger` with `fields.error_code` (P1003 = "database does not
// exist" makes the CLI run `cli create-database`).
if (args.cli) {
  try {
    const url = requireUrl(datasource.url);
    if (args.cli === "can-connect-to-database") await withClient(url, (c) => c.query("SELECT 1"));
    // Another process may create it between our can-connect and create-database (parallel
    // `migrate deploy` runs): that is success too.
    else if (args.cli === "create-database") await createDatabase(url, { ifNotExists: true });
    else if (args.cli === "drop-database") await dropDatabase(url);
    else throw Object.assign(new Error(`unsupported command: cli ${args.cli}`), { code: "P1000" });
    process.exit(0);
  } catch (error) {
    process.stderr.write(`${logRecord("INFO", { message: `cli ${args.cli}` })}\n`);
    fatal(error);
  }
}

// --- Load the WebAssembly engine. Its package entry imports the .wasm file as an ES module,
// which Node 20 cannot do without a flag, so instantiate the bindings by hand.
const bindgenUrl = import.meta.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
const wasmBindings = await import(bindgenUrl);
const { instance } = await WebAssembly.instantiate(readFileSync(new URL("schema_engine_bg.wasm", bindgenUrl)), {
  "./schema_engine_bg.js": wasmBindings,
});
wasmBindings.__wbg_set_wasm(instance.exports);
instance.exports.__wbindgen_start();
// The engine's panic hook reports the panic message through this global.
let panicMessage = "";
globalThis.PRISMA_WASM_PANIC_REGISTRY = { set_message: (m) => (panicMessage = m), get: () => panicMessage };

if (args.version) {
  process.stdout.write(`schema-engine-cli ${wasmBindings.version()}\n`);
  process.exit(0);
}

// In JSON-RPC mode, never exit on an error: the CLI only reports our exit while it waits
// for an answer, and if we are gone by the time it stops us it exits 0 without a word. So
// a start-up failure (e.g. the database does not exist) becomes the answer to every
// request, and anything thrown later fails the requests in flight.
let engine;
let startupError;
try {
  const datamodels = args.datamodels.length ? args.datamodels.map((p) => [p, readFileSync(p, "utf8")]) : undefined;
  engine = await wasmBindings.SchemaEngine.new(
    { datamodels },
    // Engine log lines go to stderr, where the CLI collects them for its error messages.
    (log) => process.stderr.write(`${log}\n`),
    bindMigrationAwareSqlAdapterFactory(new PgFactory(datasource.url, datasource.shadowDatabaseUrl)),
  );
} catch (error) {
  startupError = error;
}

const inFlight = new Map(); // request id -> rejects its answer
const running = new Set();
const pendingToCli = new Map(); // our own requests to the CLI (only `print`)
let nextOwnId = 1_000_000_000;
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

const failInFlight = (error) => {
  process.stderr.write(`${logRecord("ERROR", { message: String(error?.stack ?? error) })}\n`);
  for (const reject of inFlight.values()) reject(error);
};
process.on("uncaughtException", failInFlight);
process.on("unhandledRejection", failInFlight);

createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on("line", (line) => {
    if (!line.trim()) return;
    const message = JSON.parse(line);
    if (message.method === undefined) {
      pendingToCli.get(message.id)?.();
      pendingToCli.delete(message.id);
      return;
    }
    const job = handle(message).finally(() => running.delete(job));
    running.add(job);
  })
  // The wasm engine leaves timers (pool idle timeouts) behind: exit explicitly once the
  // CLI closes our stdin, after answering what is still running.
  .on("close", async () => {
    await Promise.allSettled([...running]);
    await shutdown();
  });
// The CLI sends SIGTERM right after closing stdin.
process.on("SIGTERM", shutdown);

async function shutdown() {
  // Shadow databases the engine did not dispose of (it normally does before answering).
  await Promise.allSettled([...shadowDatabases].map(dropDatabase));
  process.exit(0);
}

async function handle({ id, method, params }) {
  const aborted = new Promise((_, reject) => inFlight.set(id, reject));
  try {
    if (startupError) throw startupError;
    const result = await Promise.race([dispatch(method, params ?? {}), aborted]);
    send({ jsonrpc: "2.0", id, result: result ?? {} });
  } catch (error) {
    send({ jsonrpc: "2.0", id, error: toRpcError(error) });
  } finally {
    inFlight.delete(id);
  }
}

async function dispatch(method, params) {
  switch (method) {
    case "diff": {
      // The native engine sends the diff to the CLI in a `print` request (which is what
      // `migrate diff -o <file>` captures); the wasm engine returns it instead.
      const { exitCode, stdout } = await engine.diff(params);
      if (stdout) await printThroughCli(stdout);
      return { exitCode, stdout: null };
    }
    case "getDatabaseVersion":
      return engine.version(params);
    case "createDatabase": {
      const url = params.datasource?.tag === "ConnectionString" ? params.datasource.url : datasource.url;
      return { databaseName: await createDatabase(requireUrl(url)) };
    }
    case "applyMigrations":
    case "createMigration":
    case "dbExecute":
    case "devDiagnostic":
    case "diagnoseMigrationHistory":
    case "ensureConnectionValidity":
    case "evaluateDataLoss":
    case "introspect":
    case "introspectSql":
    case "markMigrationApplied":
    case "markMigrationRolledBack":
    case "reset":
    case "schemaPush":
      return engine[method](params); // keep `engine.` in the call: wasm methods need `this`
    case "debugPanic":
      return engine.debugPanic();
    default:
      throw Object.assign(new Error(`The offline schema engine does not support \`${method}\`.`), { code: "P1000" });
  }
}

function printThroughCli(content) {
  const id = nextOwnId++;
  return new Promise((resolve) => {
    pendingToCli.set(id, resolve);
    // The CLI appends its own newline.
    send({ jsonrpc: "2.0", id, method: "print", params: { content: content.replace(/\n$/, "") } });
  });
}

function toRpcError(error) {
  if (error?.name === "RuntimeError") {
    const message = panicMessage || String(error.message);
    return { code: 4466, message, data: { is_panic: true, message, backtrace: error.stack ?? null } };
  }
  const { code, message } = toUserFacing(error, datasource.url);
  return { code: 4466, message, data: { is_panic: false, message, error_code: code, meta: error?.meta ?? null } };
}

// --- PostgreSQL through @prisma/adapter-pg, with three fixes for what the engine needs.
function PgFactory(url, shadowDatabaseUrl) {
  this.provider = "postgres";
  this.adapterName = "@prisma/adapter-pg";
  const options = (u) => ({ schema: new URL(u).searchParams.get("schema") ?? undefined });

  this.connect = async () => patchAdapter(await new PrismaPg({ connectionString: requireUrl(url) }, options(url)).connect());

  // adapter-pg's own connectToShadowDb() spreads `database` next to `connectionString`,
  // and pg lets the connection string win: the "shadow" would be the main database.
  // Create a throw-away database on the same server (or on shadowDatabaseUrl's) instead.
  this.connectToShadowDb = async () => {
    const base = requireUrl(shadowDatabaseUrl ?? url);
    const shadowUrl = withDatabase(base, `prisma_shadow_${randomUUID().replaceAll("-", "")}`);
    await createDatabase(shadowUrl);
    shadowDatabases.add(shadowUrl);
    const adapter = patchAdapter(await new PrismaPg({ connectionString: shadowUrl }, options(base)).connect());
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await dispose();
      await dropDatabase(shadowUrl);
      shadowDatabases.delete(shadowUrl);
    };
    return adapter;
  };
}

function patchAdapter(adapter) {
  patchQueryable(adapter);
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (...a) => patchQueryable(await startTransaction(...a));
  // adapter-pg splits scripts on ";", which cuts function bodies ($$ ... ; ... $$) apart.
  // Send the whole script as one simple query, as the native engine does.
  adapter.executeScript = async (script) => {
    try {
      await adapter.client.query(script);
    } catch (error) {
      adapter.onError(error);
    }
  };
  return adapter;
}

// The engine's catalog queries return PostgreSQL's one-byte "char" type (OID 18, e.g.
// pg_constraint.contype), which adapter-pg 7.10.1 rejects ("Column type 'char' could not
// be deserialized"). Let adapter-pg read it as text, then report it as Character.
function patchQueryable(queryable) {
  const performIO = queryable.performIO.bind(queryable);
  queryable.performIO = async (query) => {
    const result = await performIO(query);
    const indexes = [];
    result.fields.forEach((field, i) => {
      if (field.dataTypeID === 18) {
        field.dataTypeID = 25; // text
        indexes.push(i);
      }
    });
    if (indexes.length) charColumns.set(query, indexes);
    return result;
  };
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.queryRaw = async (query) => {
    const result = await queryRaw(query);
    for (const i of charColumns.get(query) ?? []) result.columnTypes[i] = ColumnTypeEnum.Character;
    return result;
  };
  return queryable;
}

// --- Small helpers.
function logRecord(level, fields) {
  return JSON.stringify({ timestamp: new Date().toISOString(), level, fields, target: "schema_engine::logger" });
}

function fatal(error) {
  const { code, message } = toUserFacing(error, datasource.url);
  process.stderr.write(logRecord("ERROR", { message, error_code: code }));
  process.exit(1);
}

function parseArgs(argv) {
  const out = { datamodels: [], datasource: undefined, cli: undefined, version: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--datasource") out.datasource = argv[++i];
    else if (a === "--datamodels") out.datamodels.push(argv[++i]);
    else if (a === "--enabled-preview-features" || a === "--extension-types") i++;
    else if (a === "--version" || a === "-V") out.version = true;
    else if (a === "cli") out.cli = argv[++i];
  }
  return out;
}

function requireUrl(url) {
  if (!url) throw Object.assign(new Error("No datasource URL: set DATABASE_URL."), { code: "P1012" });
  return url;
}

function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.href;
}

function databaseName(url) {
  return decodeURIComponent(new URL(url).pathname.slice(1)) || "postgres";
}

function quoteIdent(name) {
  return `"${name.replaceAll('"', '""')}"`;
}

async function withClient(url, fn) {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

// CREATE/DROP DATABASE run from the maintenance database `postgres` of the same server.
async function createDatabase(url, { ifNotExists = false } = {}) {
  const name = databaseName(url);
  try {
    await withClient(withDatabase(url, "postgres"), (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
  } catch (error) {
    // 42P04 duplicate_database; 23505 when two CREATE DATABASE race on pg_database's index.
    if (!(ifNotExists && (error.code === "42P04" || error.code === "23505"))) throw error;
  }
  return name;
}

async function dropDatabase(url) {
  const name = databaseName(url);
  await withClient(withDatabase(url, "postgres"), (c) =>
    c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`),
  );
}

// Map node-postgres / adapter / engine errors onto Prisma's user-facing error codes.
function toUserFacing(error, url) {
  const cause = error?.cause && typeof error.cause === "object" ? error.cause : {};
  const pgCode = error?.code ?? cause.originalCode ?? cause.code;
  const where = url ? safeHost(url) : "the database server";
  const message = String(error?.message ?? error);
  if (typeof error?.code === "string" && /^P\d{4}$/.test(error.code)) return { code: error.code, message };
  if (pgCode === "3D000" || cause.kind === "DatabaseDoesNotExist")
    return { code: "P1003", message: `Database \`${url ? databaseName(url) : "?"}\` does not exist on the database server at \`${where}\`.` };
  if (pgCode === "28P01" || pgCode === "28000" || cause.kind === "AuthenticationFailed")
    return { code: "P1000", message: `Authentication failed against database server at \`${where}\`: ${message}` };
  if (pgCode === "42P04" || cause.kind === "DatabaseAlreadyExists")
    return { code: "P1009", message: `Database already exists on the database server at \`${where}\`.` };
  if (["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT"].includes(pgCode) || cause.kind === "DatabaseNotReachable")
    return { code: "P1001", message: `Can't reach database server at \`${where}\`: ${message}` };
  return { code: pgCode && /^P\d{4}$/.test(pgCode) ? pgCode : undefined, message };
}

function safeHost(url) {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}`;
  } catch {
    return "the database server";
  }
}
