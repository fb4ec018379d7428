import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { appRouter } from "../../server/trpc/root";

/** Every procedure named in the first column of a table in docs/api.md (e.g. "`tokens.list` / `tokens.revoke`"). */
async function documentedProcedures(): Promise<Set<string>> {
  const text = await readFile(path.join(import.meta.dirname, "../../docs/api.md"), "utf8");
  const names = new Set<string>();
  for (const line of text.split("\n")) {
    const firstCell = /^\|([^|]*)\|/.exec(line)?.[1];
    if (!firstCell) continue;
    for (const match of firstCell.matchAll(/`([a-z][a-zA-Z]*\.[a-zA-Z]+)`/g)) names.add(match[1]!);
  }
  return names;
}

describe("docs/api.md and the router name the same procedures", () => {
  it("every documented procedure exists in the router, and every router procedure is documented", async () => {
    const documented = await documentedProcedures();
    const implemented = new Set(Object.keys(appRouter._def.procedures));
    expect(documented.size).toBeGreaterThan(30);
    const missing = [...documented].filter((name) => !implemented.has(name)).sort();
    expect(missing, "documented in docs/api.md but not in the router").toEqual([]);
    const undocumented = [...implemented].filter((name) => !documented.has(name)).sort();
    expect(undocumented, "in the router but not documented in docs/api.md").toEqual([]);
  });
});
