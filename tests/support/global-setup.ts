import { execFileSync } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "../../server/database/embedded";
import { migrateDeploy } from "../../server/database/migrate";
import { INSTALL_TEST_CLOCK } from "./clock";

export const TEMPLATE_DATABASE = "wg_template";
/** The migrated database as production has it: the template before the test clock went in. */
export const MIGRATED_DATABASE = "wg_migrated";

declare module "vitest" {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    migratedDatabase: string;
  }
}

/**
 * One real PostgreSQL for the whole run (embedded, in a temp dir, fsync off), with a
 * migrated template database that every test file clones (tests/support/database.ts), with
 * the movable clock of tests/support/clock.ts, and a copy of it as migrated (without that clock).
 */
export default async function setup(project: TestProject) {
  // The CLI and MCP tests run the compiled agent package: compile the current source first.
  execFileSync(process.execPath, [path.resolve(import.meta.dirname, "../../packages/agent/build.mjs"), "--js"], { stdio: "ignore" });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "work-graph-test-"));
  await chmod(dataDir, 0o755); // PostgreSQL runs as the OS user `postgres` when we are root

  const server = await startEmbeddedPostgres({ dataDir: path.join(dataDir, "pg"), databaseName: TEMPLATE_DATABASE, durable: false });
  await migrateDeploy(server.url);
  // A template must have no other connections when it is cloned.
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${MIGRATED_DATABASE} TEMPLATE ${TEMPLATE_DATABASE}`);
  const template = new pg.Client({ connectionString: server.url });
  await template.connect();
  await template.query(INSTALL_TEST_CLOCK);
  await template.end();
  await admin.query(`ALTER DATABASE ${TEMPLATE_DATABASE} WITH ALLOW_CONNECTIONS false`);
  await admin.end();
  process.env.WORK_GRAPH_TEST_ADMIN_URL = server.adminUrl;
  project.provide("adminDatabaseUrl", server.adminUrl);
  project.provide("templateDatabase", TEMPLATE_DATABASE);
  project.provide("migratedDatabase", MIGRATED_DATABASE);
  return async () => {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
}
