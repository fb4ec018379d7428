import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { REASONS, stage, STAGES, TERMINAL_STAGES } from "@work-graph/contract";
import { TRPC_CODE_BY_REASON } from "../../server/errors";
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

const apiText = () => readFile(path.join(import.meta.dirname, "../../docs/api.md"), "utf8");

/** The rows of the table under "## Errors": reason and tRPC code (without a "(413)"-style status), in order. */
async function documentedReasons(): Promise<{ reason: string; code: string }[]> {
  const text = await apiText();
  const section = text.slice(text.indexOf("\n## Errors\n"), text.indexOf("\n## ", text.indexOf("\n## Errors\n") + 1));
  return [...section.matchAll(/^\| `([A-Z_]+)` \| ([A-Z_]+)[^|]*\|/gm)].map((match) => ({ reason: match[1]!, code: match[2]! }));
}

/** The union of the WorkItem shape's `stage` field, in order. */
async function documentedStages(): Promise<string[]> {
  const text = await apiText();
  const field = /^\s*stage: ((?:"[a-z_]+"\s*\|?\s*)+)/m.exec(text)?.[1] ?? "";
  return [...field.matchAll(/"([a-z_]+)"/g)].map((match) => match[1]!);
}

describe("docs/api.md and the shared lists name the same stages and error reasons", () => {
  it("REASONS is the Errors table, and TRPC_CODE_BY_REASON maps each reason to the documented tRPC code", async () => {
    const documented = await documentedReasons();
    expect(documented.length).toBeGreaterThan(10);
    expect([...REASONS]).toEqual(documented.map((row) => row.reason));
    expect(Object.entries(TRPC_CODE_BY_REASON)).toEqual(documented.map((row) => [row.reason, row.code]));
  });

  it("STAGES is the WorkItem shape's stage union, and the stage input schema takes exactly those", async () => {
    expect([...STAGES]).toEqual(await documentedStages());
    expect(stage.options).toEqual([...STAGES]);
  });

  it("the SDK re-exports both lists, in its source and in the bundle it ships", async () => {
    const source = await import("../../packages/agent/src/sdk/index");
    expect(source.STAGES).toBe(STAGES);
    expect(source.REASONS).toBe(REASONS);
    expect(source.API_REASONS).toBe(REASONS);
    expect(source.TERMINAL_STAGES).toEqual(["released", "cancelled"]);
    // The built bundle (npm ci builds it) carries its own copy of the plain constant module.
    const built = (await import(pathToFileURL(path.join(import.meta.dirname, "../../packages/agent/dist/index.js")).href)) as typeof source;
    expect([...built.STAGES]).toEqual([...STAGES]);
    expect([...built.REASONS]).toEqual([...REASONS]);
    expect([...built.TERMINAL_STAGES]).toEqual([...TERMINAL_STAGES]);
  });
});
