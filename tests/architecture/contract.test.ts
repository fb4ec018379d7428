import { readFile } from "node:fs/promises";
import path from "node:path";
import { importItem, namedShapes } from "@work-graph/contract";
import { describe, expect, it } from "vitest";
import { repo, sourceFiles } from "./support";

/*
 * One contract (issue 39 item 1): the API's shapes are written once, as the zod schemas of
 * packages/contract, and everything else takes them from there: the routers, the OpenAPI
 * document, the SDK, the MCP server's tools, the CLI and the dashboard. Static checks over the
 * source; the import rules themselves are dependency-cruiser's (tests/architecture/layers.test.ts).
 */

const SCANNED = ["server", "app", "packages/agent/src", "scripts", "bench"];

/**
 * Type literals, interfaces and z.object({…}) calls, each with its own (top-level) keys. A
 * database row (a type named …Row) is left out: it has the shape's names with the database's
 * types (Date, bigint), and its mapping to the shape is the point of it.
 */
function objectShapes(text: string): { at: number; keys: Set<string> }[] {
  const shapes: { at: number; keys: Set<string> }[] = [];
  for (const start of text.matchAll(/(?:\binterface\s+(?!\w*Row\b)\w+(?:<[^>{]*>)?(?:\s+extends\s+[^{]+)?\s*|\btype\s+(?!\w*Row\b)\w+(?:<[^>=]*>)?\s*=\s*|z\.object\(\s*)\{/g)) {
    const open = start.index + start[0].length - 1;
    const keys = new Set<string>();
    let depth = 0;
    for (let index = open; index < text.length; index++) {
      const char = text[index];
      if (char === "{" || char === "(" || char === "[") depth++;
      else if (char === "}" || char === ")" || char === "]") {
        depth--;
        if (depth === 0) break;
      } else if (depth === 1) {
        const key = /^[\s,;{]*(\w+)\??\s*:/.exec(text.slice(index - 1, index + 80));
        if (key && /[\s,;{]/.test(text[index - 1]!)) keys.add(key[1]!);
      }
    }
    shapes.push({ at: start.index, keys });
  }
  return shapes;
}

const shapeKeys = (schema: { shape: Record<string, unknown> }) => Object.keys(schema.shape);
// Shapes of three fields or fewer (Project: id, name, createdAt) are too common to tell a copy by.
const CONTRACT_SHAPES = ([
  ...Object.entries(namedShapes).map(([name, schema]) => [name, shapeKeys(schema)]),
  ["import item", shapeKeys(importItem)],
] as [string, string[]][]).filter(([, keys]) => keys.length > 3);

/** Shapes in `text` that declare every key of a contract shape: a second copy of it. */
function copiedShapes(text: string): string[] {
  return objectShapes(text).flatMap(({ at, keys }) =>
    CONTRACT_SHAPES.filter(([, names]) => names.every((name) => keys.has(name))).map(([name]) => `line ${text.slice(0, at).split("\n").length}: ${name}`));
}

async function sources(dirs: string[]): Promise<[file: string, text: string][]> {
  const files = (await Promise.all(dirs.map((dir) => sourceFiles(dir)))).flat();
  return Promise.all(files.map(async (file) => [file, await readFile(path.join(repo, file), "utf8")] as [string, string]));
}

describe("the API's shapes are written once, in packages/contract", () => {
  it("no interface, type literal or z.object outside the contract declares all the fields of one of its shapes", async () => {
    const copies = (await sources(SCANNED)).flatMap(([file, text]) => copiedShapes(text).map((copy) => `${file} ${copy}`));
    expect(copies).toEqual([]);
  });

  it("the check finds a copy (it can fail)", () => {
    const lease = "interface Lease { id: string; workItemId: string; workerId: string; epoch: number; acquiredAt: string; expiresAt: string;\n renewedAt: string | null; endedAt: string | null; outcome: string | null }";
    expect(copiedShapes(`const x = 1;\n${lease}`)).toEqual(["line 2: Lease"]);
    expect(copiedShapes('const item = z.object({ ref: z.string(), id: z.string(), title: z.string(), description: z.string(), parent: z.string(), dependsOn: z.array(z.string()), priority: z.number(), requires: z.array(z.string()), concurrencyKey: z.string(), notBefore: z.string(), delaySeconds: z.number(), externalId: z.string() });'))
      .toEqual(["line 1: import item"]);
    expect(copiedShapes("type Partial = { id: string; workItemId: string }")).toEqual([]);
    expect(copiedShapes(`${lease.replace("interface Lease", "interface LeaseRow")}`)).toEqual([]);
  });

  it("the agent package names no file of the server or the dashboard, not even for types", async () => {
    const reaching = (await sources(["packages/agent/src"])).filter(([, text]) => /from\s+["'](?:\.\.\/)+(?:server|app)\/|from\s+["']@\/(?:server|app)\//.test(text));
    expect(reaching.map(([file]) => file)).toEqual([]);
  });

  it("the MCP server's tool arguments are the contract's schemas: it writes no string or enum schema of its own", async () => {
    const text = await readFile(path.join(repo, "packages/agent/src/mcp/server.ts"), "utf8");
    expect(text).toMatch(/from "@work-graph\/contract"/);
    expect(text.match(/\bz\.(string|enum|object)\(/g) ?? []).toEqual([]);
  });

  it("the routers validate with the contract's inputs: no router writes a schema", async () => {
    const routers = await sources(["server/trpc/routers"]);
    expect(routers.length).toBeGreaterThan(10);
    expect(routers.filter(([, text]) => /\bz\.\w+\(/.test(text) || /from "zod"/.test(text)).map(([file]) => file)).toEqual([]);
    expect(routers.filter(([, text]) => /\.input\((?!inputs\[")/.test(text)).map(([file]) => file)).toEqual([]);
  });
});
