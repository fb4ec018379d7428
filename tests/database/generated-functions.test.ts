// SQL functions built from the TypeScript fragments (server/sql/static-sql.ts) live in
// migrations, which never change once written. When a fragment they use changes (readiness,
// fencing, a lease ending), the newest migration defining the function is out of date: this
// test names the function and the command that prints its current text.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect } from "vitest";
import { projectRoot } from "../../server/database/migrate";
import { RELEASE_LEASE_FUNCTION } from "../../server/sql/leases";
import { databaseTest } from "../support/fixtures";

const GENERATED = [{ name: "release_lease", definition: RELEASE_LEASE_FUNCTION }];

async function newestDefinition(name: string): Promise<{ migration: string; text: string } | undefined> {
  const dir = path.join(projectRoot(), "prisma", "migrations");
  const migrations = (await readdir(dir, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  for (const migration of migrations.reverse()) {
    const text = await readFile(path.join(dir, migration, "migration.sql"), "utf8");
    if (text.includes(`FUNCTION "${name}"(`)) return { migration, text };
  }
  return undefined;
}

const it = databaseTest({ poolSize: 2 });

describe("generated SQL functions", () => {
  it.each(GENERATED)("the newest migration defining $name holds the text the code generates", async ({ name, definition }) => {
    const newest = await newestDefinition(name);
    expect(newest, `no migration defines ${name}`).toBeDefined();
    expect(
      newest!.text.includes(definition),
      `${newest!.migration} defines an outdated ${name}: write the output of \`npx tsx scripts/generated-sql.ts\` into a new migration (npm run db:migrate:new -- <name>)`,
    ).toBe(true);
  });

  it.for(GENERATED)("the migrated database runs the generated body of $name", async ({ name, definition }, { database }) => {
    const [row] = await database.db.$queryRaw<{ body: string }[]>`SELECT prosrc AS body FROM pg_proc WHERE proname = ${name}`;
    expect(row?.body).toBe(definition.slice(definition.indexOf("$$") + 2, definition.lastIndexOf("$$")));
  });
});
