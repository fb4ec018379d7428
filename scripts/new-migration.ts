// npm run db:migrate:new -- <name>
//
// Writes prisma/migrations/<UTC YYYYMMDDHHMMSS>_<name>/migration.sql with the SQL that takes
// the database from the existing migrations to prisma/schema.prisma. `prisma migrate dev`
// would do this too, but it refuses to run in non-interactive shells; `migrate diff` does
// not. Replaying the migrations needs a throw-away shadow database: it is created on the
// server of DATABASE_URL when set, else on an embedded PostgreSQL started (and removed) here.
// Edit the generated SQL by hand for what the schema cannot express (checks, partial
// indexes, triggers); tests/database/drift.test.ts keeps both sides in agreement.
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { databaseUrl as configuredDatabaseUrl } from "../server/config";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../server/database/embedded";
import { projectRoot, runPrismaCli } from "../server/database/migrate";

async function main(): Promise<void> {
  const rawName = process.argv.slice(2).join("_");
  const name = rawName.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "");
  if (!name) {
    console.error("usage: npm run db:migrate:new -- <name>   (e.g. add_worker_labels)");
    process.exit(64);
  }

  const root = projectRoot();
  const migrationsDir = path.join(root, "prisma", "migrations");
  const timestamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
  const latest = (await readdir(migrationsDir, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .at(-1);
  if (latest && `${timestamp}_${name}` <= latest) {
    throw new Error(`the new migration would sort before ${latest}: check the clock`);
  }

  const work = await mkdtemp(path.join(tmpdir(), "work-graph-migration-"));
  // As root, PostgreSQL runs as the OS user `postgres`, which must reach its data directory.
  await chmod(work, 0o755);
  let server: EmbeddedDatabase | undefined;
  try {
    let databaseUrl = configuredDatabaseUrl();
    if (!databaseUrl) {
      console.error("DATABASE_URL is not set: starting a throw-away PostgreSQL for the shadow database…");
      server = await startEmbeddedPostgres({ dataDir: path.join(work, "pg"), durable: false });
      databaseUrl = server.url;
    }
    const output = path.join(work, "migration.sql");
    const diff = await runPrismaCli(
      [
        "migrate", "diff",
        "--from-migrations", migrationsDir,
        "--to-schema", path.join(root, "prisma", "schema.prisma"),
        "--script", "--exit-code", "--output", output,
      ],
      { databaseUrl },
    );
    // --exit-code: 0 = no difference, 2 = a difference was written to --output.
    if (diff.exitCode === 0) {
      console.log("no changes");
      return;
    }
    if (diff.exitCode !== 2) {
      throw new Error(`prisma migrate diff failed (exit code ${diff.exitCode}):\n${diff.stdout}${diff.stderr}`);
    }
    const dir = path.join(migrationsDir, `${timestamp}_${name}`);
    await mkdir(dir);
    const file = path.join(dir, "migration.sql");
    await writeFile(file, await readFile(output, "utf8"));
    console.log(path.relative(process.cwd(), file));
  } finally {
    await server?.stop();
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
