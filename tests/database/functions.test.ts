// Every database function and trigger has one file under prisma/functions/ (triggers under
// prisma/functions/triggers/) holding its current definition; migrations, which never change
// once written, hold its history. Changing one = editing its file + a new migration with the
// same text. This test applies the files to the migrated database (as production has it: the
// global setup's copy from before the test clock went in) in a transaction it rolls back, and
// compares what PostgreSQL prints for each (pg_get_functiondef, pg_get_triggerdef)
// before and after, so layout outside the function bodies does not matter.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { projectRoot } from "../../server/database/migrate";
import { adminDatabaseUrl } from "../support/database";

const FUNCTIONS = path.join(projectRoot(), "prisma", "functions");
const TRIGGERS = path.join(FUNCTIONS, "triggers");

const sqlFiles = async (dir: string) => (await readdir(dir)).filter((file) => file.endsWith(".sql")).sort();
const names = (files: string[]) => files.map((file) => file.slice(0, -".sql".length));

/** The definitions of the functions and triggers of schema public, keyed by signature and trigger name. */
async function definitions(sql: pg.Client) {
  const functions = await sql.query<{ key: string; name: string; definition: string }>(
    `SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS key, p.proname AS name, pg_get_functiondef(p.oid) AS definition
       FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace ORDER BY 1`,
  );
  const triggers = await sql.query<{ key: string; definition: string }>(
    `SELECT t.tgname AS key, pg_get_triggerdef(t.oid) AS definition
       FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal ORDER BY 1`,
  );
  return {
    functionNames: [...new Set(functions.rows.map((row) => row.name))].sort(),
    triggerNames: triggers.rows.map((row) => row.key),
    functions: Object.fromEntries(functions.rows.map((row) => [row.key, row.definition])),
    triggers: Object.fromEntries(triggers.rows.map((row) => [row.key, row.definition])),
  };
}

describe("prisma/functions", () => {
  const sql = new pg.Client({ connectionString: adminDatabaseUrl().replace(/\/postgres$/, `/${inject("migratedDatabase")}`) });
  beforeAll(() => sql.connect());
  afterAll(() => sql.end());

  it("has one file per function and per trigger of the migrated database", async () => {
    const migrated = await definitions(sql);
    expect(names(await sqlFiles(FUNCTIONS))).toEqual(migrated.functionNames);
    expect(names(await sqlFiles(TRIGGERS))).toEqual(migrated.triggerNames);
  });

  it("holds the definitions the migrations left in the database", async () => {
    const migrated = await definitions(sql);
    await sql.query("BEGIN");
    try {
      for (const file of await sqlFiles(FUNCTIONS)) await sql.query(await readFile(path.join(FUNCTIONS, file), "utf8"));
      for (const file of await sqlFiles(TRIGGERS)) await sql.query(await readFile(path.join(TRIGGERS, file), "utf8"));
      const fromFiles = await definitions(sql);
      for (const [signature, definition] of Object.entries(fromFiles.functions)) {
        expect(migrated.functions[signature], `prisma/functions defines ${signature} unlike the migrations: add a migration with its file's text`).toBe(definition);
      }
      for (const [trigger, definition] of Object.entries(fromFiles.triggers)) {
        expect(migrated.triggers[trigger], `prisma/functions/triggers/${trigger}.sql differs from the migrations: add a migration with its text`).toBe(definition);
      }
    } finally {
      await sql.query("ROLLBACK");
    }
  });
});
