import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTENTION_KINDS, CSRF_HEADER, LEASE_NOT_CURRENT_KINDS, LEASE_OUTCOMES, REASONS, ROLES, STAGES } from "@work-graph/contract";
import { repo, sourceFiles } from "./support";

/*
 * One rule, one place (issue 11 item 7, issue 23 item 6): the names docs/api.md defines (stages,
 * lease outcomes, error reasons, attention kinds, roles, LEASE_NOT_CURRENT's kinds), the
 * dashboard's CSRF header and the path of an item's page exist once, in
 * packages/contract/src/constants.ts, which server, dashboard, CLI, MCP server and SDK all
 * import (the SDK re-exports it). That the contract package imports none of the code base and
 * the SDK no server code: tests/architecture/layers.test.ts. Static checks over the source.
 */

const CONTRACT = path.join("packages", "contract", "src", "constants.ts");
const SCANNED = ["server", "app", "packages/agent/src", "packages/contract/src"];

/** Array literals (`[…]`, `new Set([…])`, `z.enum([…])`) made only of string literals, with at least two. */
function stringListLiterals(text: string): string[][] {
  const lists: string[][] = [];
  for (const match of text.matchAll(/\[([^[\]]*)\]/g)) {
    const body = match[1]!;
    if (!/^\s*(?:(?:"[^"\n]*"|'[^'\n]*')\s*,\s*)+(?:"[^"\n]*"|'[^'\n]*')\s*,?\s*$/.test(body)) continue;
    lists.push([...body.matchAll(/"([^"\n]*)"|'([^'\n]*)'/g)].map((m) => m[1] ?? m[2]!));
  }
  return lists;
}

const LISTS: [name: string, names: ReadonlySet<string>][] = [
  ["stages", new Set(STAGES)],
  ["reasons", new Set(REASONS)],
  ["lease outcomes", new Set(LEASE_OUTCOMES)],
  ["attention kinds", new Set(ATTENTION_KINDS)],
  ["roles", new Set(ROLES)],
  ["LEASE_NOT_CURRENT kinds", new Set(LEASE_NOT_CURRENT_KINDS)],
];

/** The lists in `text` made only of names of one of LISTS: a second copy of (part of) a contract list. */
function copiedLists(text: string): string[] {
  const copies: string[] = [];
  for (const list of stringListLiterals(text)) {
    const copied = LISTS.find(([, names]) => list.every((name) => names.has(name)));
    if (copied) copies.push(`${copied[0]}: [${list.join(", ")}]`);
  }
  return copies;
}

/** Every source file of SCANNED but the contract module, with its text. */
async function scannedSources(): Promise<[file: string, text: string][]> {
  const files = (await Promise.all(SCANNED.map((dir) => sourceFiles(dir)))).flat().filter((file) => file !== CONTRACT);
  return Promise.all(files.map(async (file) => [file, await readFile(path.join(repo, file), "utf8")] as [string, string]));
}

describe("the contract's lists, header and item path are defined once", () => {
  it("no list of stage, outcome, reason, attention kind, role or LEASE_NOT_CURRENT kind names appears outside packages/contract/src/constants.ts", async () => {
    const offending = (await scannedSources()).flatMap(([file, text]) => copiedLists(text).map((copy) => `${file}: ${copy}`));
    expect(offending).toEqual([]);
  });

  it("the check finds a second copy of each list (it can fail)", () => {
    expect(copiedLists('const kinds = ["decision", "authority", "access", "review", "help", "scope"] as const;')).toEqual([
      "attention kinds: [decision, authority, access, review, help, scope]",
    ]);
    expect(copiedLists('role: z.enum(["agent", "operator", "admin"])')).toEqual(["roles: [agent, operator, admin]"]);
    expect(copiedLists("new Set(['operator', 'admin'])")).toEqual(["roles: [operator, admin]"]);
    expect(copiedLists('const FENCE = ["expired", "superseded", "revoked", "ended", "unknown"];')).toHaveLength(1);
    expect(copiedLists('["released", "cancelled"]')).toHaveLength(1);
    expect(copiedLists('["json", "slack"]')).toEqual([]);
  });

  it("the CSRF header's name and the item page's path are written only there", async () => {
    const offending: string[] = [];
    for (const [file, text] of await scannedSources()) {
      if (text.toLowerCase().includes(CSRF_HEADER)) offending.push(`${file}: ${CSRF_HEADER}`);
      if (/["'`]\/items\//.test(text)) offending.push(`${file}: an item's path (use itemHref)`);
    }
    expect(offending).toEqual([]);
    const contract = await readFile(path.join(repo, CONTRACT), "utf8");
    expect(contract).toContain(`"${CSRF_HEADER}"`);
    expect(contract).toMatch(/`\/items\//);
  });
});

describe("the dashboard's explanations come from the server", () => {
  it("the work-item page explains a stage from the server's waitingOn, not from readiness counters", async () => {
    const text = await readFile(path.join(repo, "app/_components/item-view.tsx"), "utf8");
    const start = text.indexOf("function waitingOnLines(");
    const end = text.indexOf("function useInvalidateAll(");
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    const explanation = text.slice(start, end);
    expect(explanation).toContain("around?.waitingOn");
    // What the page-side copy of the rule read: counters, the live lease, attention and terminal filters.
    expect(explanation).not.toMatch(/openChildCount\s*>|currentLease|\.blocking\b|status === |TERMINAL|isTerminalStage/);
  });
});

describe("ending a lease is written once", () => {
  it("only server/domain/leases.ts (endLeasesSql) sets a lease's end; every ending uses it", async () => {
    const writers: string[] = [];
    for (const file of await sourceFiles("server")) {
      const text = await readFile(path.join(repo, file), "utf8");
      if (/UPDATE\s+leases\b[^;`]*?\bSET\b[^;`]*?\bended_at\s*=/i.test(text)) writers.push(file);
    }
    expect(writers).toEqual([path.join("server", "domain", "leases.ts")]);
    const users: string[] = [];
    for (const file of await sourceFiles("server")) {
      if (/\bendLease(s?Sql)?\(/.test(await readFile(path.join(repo, file), "utf8"))) users.push(file);
    }
    // release and cancel (finish), decompose, attention, revoke, expiry (sweep, reclaim, cascades).
    for (const ending of ["server/operations/finish.ts", "server/operations/decompose.ts", "server/operations/attention.ts", "server/operations/revoke.ts", "server/domain/expiry.ts"]) {
      expect(users).toContain(path.join(...ending.split("/")));
    }
  });
});
