import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Instance } from "../../server/instance";
import { hasPendingMigrations, migrateDeploy } from "../../server/database/migrate";
import { refuseUnsupportedServer } from "../../server/database/server-version";
import { sweepExpiredLeases } from "../../server/operations/sweep";
import { callerAs, startTestServer, type TestServer } from "../support/app";
import { createTestDatabase, testInstance } from "../support/database";
import { refusal } from "../support/fixtures";
import { openSse } from "../support/sse";
import { missingBinaries, startPgBouncer, startPostgres15, type PgBouncer, type Postgres15 } from "./support";

/*
 * Issue 26 item 3, River style: one list of the lease core's acceptance-level checks (claim,
 * fencing, expiry, a waiting claim woken, the event stream resuming, a stuck statement cut off),
 * run once per topology: PgBouncer 1.18 in transaction mode in front of Debian's PostgreSQL 15,
 * PostgreSQL 15 directly, and the embedded PostgreSQL 18. On PostgreSQL 15 the app runs as
 * APP_ROLE, a role with no privilege but owning its database (docs/operations.md "Minimum
 * privileges"), which also applies the migrations. Two app instances (A and B, each with its own
 * pool and LISTEN connection) share each database, so a wake-up travels through PostgreSQL.
 */

const run = promisify(execFile);
const APP_ROLE = "wg_app";
const STATEMENT_TIMEOUT_MS = 2_000;

interface Topology {
  /** The app's URL (the pooler's where there is one) and the direct one for LISTEN. */
  url: string;
  directUrl: string;
  namedStatements: boolean;
  close(): Promise<void>;
}

const skip = missingBinaries();
let postgres: Postgres15 | undefined;
let bouncer: PgBouncer | undefined;

beforeAll(async () => {
  if (skip) return;
  postgres = await startPostgres15();
  const admin = new pg.Client({ connectionString: postgres.url() });
  await admin.connect();
  await admin.query(`CREATE ROLE ${APP_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS`);
  for (const database of ["wg_pooled", "wg_direct", "wg_restored"]) await admin.query(`CREATE DATABASE ${database} OWNER ${APP_ROLE}`);
  await admin.end();
  await Promise.all(["wg_pooled", "wg_direct"].map((database) => migrateDeploy(postgres!.url(database, APP_ROLE))));
  bouncer = await startPgBouncer(postgres, { roles: [APP_ROLE], poolSize: 6 });
});

afterAll(async () => {
  await bouncer?.stop();
  await postgres?.stop();
});

const TOPOLOGIES: [string, () => Promise<Topology>][] = [
  [
    "PgBouncer 1.18 (transaction mode) in front of PostgreSQL 15",
    async () => ({ url: bouncer!.url("wg_pooled", APP_ROLE), directUrl: postgres!.url("wg_pooled", APP_ROLE), namedStatements: false, close: async () => {} }),
  ],
  [
    "PostgreSQL 15, direct",
    async () => ({ url: postgres!.url("wg_direct", APP_ROLE), directUrl: postgres!.url("wg_direct", APP_ROLE), namedStatements: true, close: async () => {} }),
  ],
  [
    "embedded PostgreSQL 18, direct",
    async () => {
      const database = await createTestDatabase({ poolSize: 2 });
      return { url: database.url, directUrl: database.url, namedStatements: true, close: () => database.close() };
    },
  ],
];

const latestSequence = async (sql: pg.Client) => Number((await sql.query("SELECT coalesce(max(sequence), 0) AS s FROM events")).rows[0].s);

describe.skipIf(skip).each(TOPOLOGIES)("%s", (_name, topology) => {
  let setup: Topology;
  let dbA: Instance;
  let dbB: Instance;
  let serverB: TestServer;
  let sql: pg.Client;
  const instance = (namedStatements: boolean) =>
    testInstance(setup.url, { poolSize: 4, statementTimeoutMs: STATEMENT_TIMEOUT_MS, namedStatements, directConnectionString: setup.directUrl });

  beforeAll(async () => {
    setup = await topology();
    dbA = instance(setup.namedStatements);
    dbB = instance(setup.namedStatements);
    serverB = await startTestServer(dbB);
    sql = new pg.Client({ connectionString: setup.directUrl });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await serverB?.close();
    for (const instance of [dbA, dbB]) await instance?.close();
    await setup?.close();
  });

  const people = async (tag: string) => ({
    operator: (await callerAs(dbA, "operator")).api,
    agentA: (await callerAs(dbA, "agent", `a-${tag}`)).api,
    agentB: (await callerAs(dbB, "agent", `b-${tag}`)).api,
  });

  it("claim: the item is leased once, at epoch 1; a second claim finds nothing", async () => {
    const { operator, agentA, agentB } = await people("claim");
    await operator.workItems.create({ id: "claimed", title: "Claimed" });
    const claim = (await agentA.leases.claim({ durationSeconds: 60 }))!;
    expect(claim.workItem.id).toBe("claimed");
    expect(claim.lease.epoch).toBe(1);
    expect(await agentB.leases.claim({ durationSeconds: 60 })).toBeNull();
    const done = await agentA.leases.release({ leaseId: claim.lease.id, epoch: 1, evidence: "done" });
    expect(done.workItem.status).toBe("released");
  });

  it("fencing and expiry: an expired lease is swept and reclaimed at epoch 2; the old holder's writes are refused", async () => {
    const { operator, agentA, agentB } = await people("fence");
    await operator.workItems.create({ id: "fenced", title: "Fenced" });
    const first = (await agentA.leases.claim({ workItemId: "fenced", durationSeconds: 1 }))!;
    // These databases are migrated as production's are, without the test clock: real time passes.
    await expect
      .poll(async () => (await sql.query<{ passed: boolean }>("SELECT work_graph_clock() > $1::timestamptz + interval '5 milliseconds' AS passed", [first.lease.expiresAt])).rows[0]!.passed, { timeout: 15_000, interval: 25 })
      .toBe(true);
    expect(await sweepExpiredLeases(dbA.db)).toBe(1);
    expect((await operator.leases.get({ leaseId: first.lease.id })).outcome).toBe("expired");
    const second = (await agentB.leases.claim({ workItemId: "fenced", durationSeconds: 60 }))!;
    expect(second.lease.epoch).toBe(2);
    for (const write of [
      () => agentA.leases.release({ leaseId: first.lease.id, epoch: 1, evidence: "late" }),
      () => agentA.leases.renew({ leaseId: first.lease.id, epoch: 1, durationSeconds: 60 }),
      () => agentA.leases.note({ leaseId: first.lease.id, epoch: 1, content: "late" }),
    ]) {
      expect((await refusal(write())).reason).toBe("LEASE_NOT_CURRENT");
    }
    expect((await operator.workItems.get({ id: "fenced" })).currentLease).toEqual(second.lease);
  });

  it("a waiting claim on instance B is woken by an item created on instance A", async () => {
    const { operator, agentB } = await people("wait");
    const hubB = dbB.wakeups;
    const before = hubB.waitingClaims;
    const waiting = agentB.leases.claim({ waitSeconds: 30, durationSeconds: 60 });
    await expect.poll(() => hubB.waitingClaims).toBe(before + 1);
    const created = Date.now();
    await operator.workItems.create({ id: "woken", title: "Woken" });
    const result = await waiting;
    expect(result?.workItem.id).toBe("woken");
    // Woken by the commit, not by the end of the wait.
    expect(Date.now() - created).toBeLessThan(20_000);
  });

  it("the event stream on instance B pushes commits made on A and resumes after a disconnect with no gap", async () => {
    const { operator } = await people("stream");
    const token = (await callerAs(dbB, "operator")).token;
    const start = await latestSequence(sql);
    const open = (input: Record<string, unknown>) =>
      openSse(`${serverB.url}/api/trpc/events.stream?input=${encodeURIComponent(JSON.stringify(input))}`, { authorization: `Bearer ${token}` });
    const sequenceOf = async (source: Awaited<ReturnType<typeof open>>) => {
      const message = await source.next();
      if (!message) throw new Error("the stream ended");
      return Number(message.id);
    };
    const first = await open({ after: start });
    await operator.workItems.create({ id: "streamed-1", title: "Streamed" });
    const seen = [await sequenceOf(first)];
    first.close();
    await operator.workItems.create({ id: "streamed-2", title: "Streamed" });
    await operator.workItems.create({ id: "streamed-3", title: "Streamed" });
    const second = await open({ after: start, lastEventId: String(seen[0]) });
    const expected = (await sql.query<{ sequence: string }>("SELECT sequence FROM events WHERE sequence > $1 ORDER BY sequence", [start])).rows.map((row) => Number(row.sequence));
    while (seen.length < expected.length) seen.push(await sequenceOf(second));
    second.close();
    expect(seen).toEqual(expected);
  });

  it("a statement stuck behind a lock is cancelled after the statement timeout: 503 UNAVAILABLE, and the pool still serves", async () => {
    const { operator } = await people("timeout");
    const locker = new pg.Client({ connectionString: setup.directUrl });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE work_items IN ACCESS EXCLUSIVE MODE");
      expect((await refusal(operator.workItems.list({}))).reason).toBe("UNAVAILABLE");
    } finally {
      await locker.query("ROLLBACK");
      await locker.end();
    }
    expect((await operator.workItems.list({})).items.length).toBeGreaterThan(0);
  });
});

describe.skipIf(skip)("PostgreSQL 15 for operators", () => {
  it("passes the start's version check; the app's role is no superuser", async () => {
    await expect(refuseUnsupportedServer(postgres!.url("wg_direct", APP_ROLE))).resolves.toBeUndefined();
    const sql = new pg.Client({ connectionString: postgres!.url("wg_direct", APP_ROLE) });
    await sql.connect();
    const { rows } = await sql.query("SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user");
    await sql.end();
    expect(rows[0]).toEqual({ rolsuper: false, rolcreatedb: false, rolcreaterole: false });
  });

  it("pg_dump of the app's database restores, as the app's role, into a fresh database that the app then serves", async () => {
    const source = postgres!.url("wg_direct", APP_ROLE);
    const restored = postgres!.url("wg_restored", APP_ROLE);
    const dump = path.join(await mkdtemp(path.join(os.tmpdir(), "wg-dump-")), "work-graph.dump");
    await run(postgres!.bin("pg_dump"), ["--format=custom", "--no-owner", "--no-privileges", `--file=${dump}`, source]);
    await run(postgres!.bin("pg_restore"), ["--no-owner", "--no-privileges", "--exit-on-error", `--dbname=${restored}`, dump]);
    await rm(path.dirname(dump), { recursive: true, force: true });
    expect(await hasPendingMigrations(restored)).toBe(false);
    const count = async (url: string) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query<{ items: number; events: number }>("SELECT (SELECT count(*)::int FROM work_items) AS items, (SELECT count(*)::int FROM events) AS events");
      await client.end();
      return rows[0];
    };
    expect(await count(restored)).toEqual(await count(source));
    const db = testInstance(restored, { poolSize: 2 });
    try {
      const operator = (await callerAs(db, "operator")).api;
      const agent = (await callerAs(db, "agent", "after-restore")).api;
      await operator.workItems.create({ id: "after-restore", title: "After the restore" });
      expect((await agent.leases.claim({ workItemId: "after-restore", durationSeconds: 60 }))?.lease.epoch).toBe(1);
    } finally {
      await db.close();
    }
  });
});
