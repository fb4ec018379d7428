// prisma/migrations (hand-written SQL, the source of truth) and prisma/schema.prisma (what
// the client is generated from) must describe the same tables, columns, keys and indexes.
// Prisma cannot see CHECK constraints, triggers or the standalone sequence, so those live
// only in the SQL; everything Prisma can see must match in both directions.
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { migrateDeploy, projectRoot, runPrismaCli } from "../../server/database/migrate";
import { adminDatabaseUrl } from "../support/database";

// Superuser URL of the embedded server that the global test setup starts. Shadow databases
// for the diffs are created (and dropped) on that server.
const adminUrl = adminDatabaseUrl();
const root = projectRoot();
const engine = path.join(root, "prisma", "engine", "schema-engine.mjs");
const TIMEOUT = 60_000;

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.href;
}

async function onAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe("migrations and schema.prisma", () => {
  it.each([
    ["migrations -> schema", ["--from-migrations", "prisma/migrations", "--to-schema", "prisma/schema.prisma"]],
    ["schema -> migrations", ["--from-schema", "prisma/schema.prisma", "--to-migrations", "prisma/migrations"]],
  ])("have no drift (%s)", async (_direction, sources) => {
    const result = await runPrismaCli(["migrate", "diff", ...sources, "--exit-code"], { databaseUrl: adminUrl });
    // --exit-code: 0 = no difference, 2 = difference (summarised on stdout), 1 = error.
    expect(result.exitCode, `${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stdout).toContain("No difference detected");
  }, TIMEOUT);

  it("apply to a missing database, which migrate deploy creates, and a second deploy is a no-op", async () => {
    const database = `drift_${randomUUID().replaceAll("-", "")}`;
    const url = withDatabase(adminUrl, database);
    try {
      await migrateDeploy(url);
      await migrateDeploy(url);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const applied = await client.query("SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL");
        expect(applied.rows.map((r: { migration_name: string }) => r.migration_name)).toContain("20261202170000_init");
        // Function bodies survived intact (adapter-pg alone splits scripts on ";"): the
        // trigger numbers events.
        const inserted = await client.query(
          `INSERT INTO events (work_item_id, type, actor) VALUES ('drift', 'check', 'test') RETURNING sequence`,
        );
        expect(Number(inserted.rows[0].sequence)).toBeGreaterThan(0);
      } finally {
        await client.end();
      }
    } finally {
      await onAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
    }
  }, TIMEOUT);
});

describe("offline schema engine stand-in", () => {
  function runEngineCli(url: string, command: string): Promise<{ code: number; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [engine, "--datasource", JSON.stringify({ url }), "cli", command],
        { timeout: TIMEOUT },
        (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
      );
    });
  }

  it("answers `cli can-connect-to-database`", async () => {
    const result = await runEngineCli(adminUrl, "can-connect-to-database");
    expect(result.code, result.stderr).toBe(0);
  }, TIMEOUT);

  it("reports a missing database as P1003, in the log record format the CLI parses", async () => {
    const result = await runEngineCli(withDatabase(adminUrl, `missing_${randomUUID().slice(0, 8)}`), "can-connect-to-database");
    expect(result.code).toBe(1);
    // The CLI skips the first stderr line and parses the rest as JSON log records.
    const records = result.stderr.split(/\r?\n/).slice(1).map((line) => JSON.parse(line) as {
      level: string;
      target: string;
      fields: { error_code?: string };
    });
    expect(records).toContainEqual(
      expect.objectContaining({ level: "ERROR", target: "schema_engine::logger", fields: expect.objectContaining({ error_code: "P1003" }) }),
    );
  }, TIMEOUT);
});
