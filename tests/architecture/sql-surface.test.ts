import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

/*
 * One named SQL surface (issue 23 item 5), after graphile-worker's src/sql/ and River's driver
 * interface. The rule, over the application's source (server/ and app/; generated code, the
 * migrations' .sql files, tests, scripts and benchmarks are not application source):
 *
 *   - statements run only in server/sql/ (and an integration's own, in its
 *     server/integrations/<name>/statements.ts): $queryRaw / $executeRaw (and their Unsafe
 *     forms), and a pg client's .query( with SQL text as its first argument;
 *   - SQL fragments (Prisma.sql, Prisma.raw, Prisma.join, Prisma.empty) are built only in
 *     those statement modules and in server/domain/, whose modules hold the rules' fragments
 *     (readiness, stage, fencing, a lease's end) that the statements are built from;
 *   - the queue order (API.md rule 10) and the next epoch (rule 3) are written once, as the
 *     named constants QUEUE_ORDER and NEXT_EPOCH.
 */

const repo = path.resolve(import.meta.dirname, "../..");
const SCANNED = ["server", "app"];
const SQL_DIR = path.join("server", "sql") + path.sep;
const DOMAIN_DIR = path.join("server", "domain") + path.sep;
const INTEGRATION_STATEMENTS = /^server\/integrations\/[a-z-]+\/statements\.ts$/;
/** Where statements run: server/sql/ and each integration's statements.ts. */
const isStatementModule = (file: string) => file.startsWith(SQL_DIR) || INTEGRATION_STATEMENTS.test(file.split(path.sep).join("/"));

// A pg client's .query( counts when its first argument, on the same line or the next, is a string: tRPC's .query( takes a function.
const STATEMENT = /\$(queryRaw|executeRaw)(Unsafe)?\b|\.query(<[^>]*>)?\(\s*[`'"]/g;
const FRAGMENT = /\bPrisma\.(sql|raw|join|empty)\b/g;

async function sources(): Promise<{ file: string; text: string }[]> {
  const found: { file: string; text: string }[] = [];
  for (const dir of SCANNED) {
    for (const entry of await readdir(path.join(repo, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.tsx?$/.test(entry.name) || entry.name.endsWith(".d.ts")) continue;
      const file = path.relative(repo, path.join(entry.parentPath, entry.name));
      if (file.split(path.sep).includes("generated")) continue;
      found.push({ file, text: await readFile(path.join(repo, file), "utf8") });
    }
  }
  return found.sort((a, b) => a.file.localeCompare(b.file));
}

/** "file:line: text" of every match of `pattern` (global) in `text`, at the line where it starts. */
function lines(file: string, text: string, pattern: RegExp): string[] {
  return [...text.matchAll(pattern)].map((match) => {
    const line = text.slice(0, match.index).split("\n").length;
    return `${file}:${line}: ${text.split("\n")[line - 1]!.trim()}`;
  });
}

const matches = (text: string, pattern: RegExp) => text.search(pattern) >= 0;

describe("the SQL surface", () => {
  it("statements run only in server/sql/ and the integrations' statements.ts", async () => {
    const all = await sources();
    const runners = all.filter(({ text }) => matches(text, STATEMENT)).map(({ file }) => file);
    // The scan sees the statements where they are (a scanner that finds nothing proves nothing).
    expect(runners.filter((file) => file.startsWith(SQL_DIR)).length).toBeGreaterThan(10);
    expect(runners).toContain(path.join("server", "sql", "claims.ts"));
    expect(runners).toContain(path.join("server", "integrations", "webhooks", "statements.ts"));
    const outside = all.filter(({ file }) => !isStatementModule(file)).flatMap(({ file, text }) => lines(file, text, STATEMENT));
    expect(outside).toEqual([]);
  });

  it("SQL fragments are built only in the statement modules and the domain's fragment modules", async () => {
    const all = await sources();
    const builders = all.filter(({ text }) => matches(text, FRAGMENT)).map(({ file }) => file);
    expect(builders).toContain(path.join("server", "domain", "readiness.ts"));
    const outside = all
      .filter(({ file }) => !isStatementModule(file) && !file.startsWith(DOMAIN_DIR))
      .flatMap(({ file, text }) => lines(file, text, FRAGMENT));
    expect(outside).toEqual([]);
  });

  it("the queue order (rule 10) and the next epoch (rule 3) are written once, as QUEUE_ORDER and NEXT_EPOCH", async () => {
    const all = await sources();
    const writers = (pattern: RegExp) => all.filter(({ text }) => pattern.test(text)).map(({ file }) => file);
    expect(writers(/priority\s+DESC/i)).toEqual([path.join("server", "domain", "readiness.ts")]);
    expect(writers(/last_epoch\s*\+\s*1/i)).toEqual([path.join("server", "domain", "fencing.ts")]);
    const uses = (name: string) => all.filter(({ file, text }) => file.startsWith(SQL_DIR) && new RegExp(`\\$\\{${name}\\}`).test(text)).map(({ file }) => file);
    expect(uses("QUEUE_ORDER")).toContain(path.join("server", "sql", "claims.ts"));
    expect(uses("NEXT_EPOCH")).toEqual([path.join("server", "sql", "claims.ts")]);
  });
});
