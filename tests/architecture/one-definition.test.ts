import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LEASE_OUTCOMES, REASONS, STAGES } from "../../server/domain/contract";
import { importsOf, repo, sourceFiles } from "./support";

/*
 * One rule, one place (issue 11 item 7): the stage and error reason lists exist once, in
 * server/domain/contract.ts, a plain constant module that server, dashboard, CLI, MCP server and
 * SDK all import (the SDK re-exports it). Static checks over the source.
 */

const CONTRACT = path.join("server", "domain", "contract");
const SCANNED = ["server", "app", "packages/agent/src"];

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

describe("the stage, lease outcome and error reason lists are defined once", () => {
  it("no list of stage, outcome or reason names appears outside server/domain/contract.ts", async () => {
    const stages = new Set<string>(STAGES);
    const reasons = new Set<string>(REASONS);
    const outcomes = new Set<string>(LEASE_OUTCOMES);
    const offending: string[] = [];
    for (const dir of SCANNED) {
      for (const file of await sourceFiles(dir)) {
        if (file.replace(/\.ts$/, "") === CONTRACT) continue;
        const text = await readFile(path.join(repo, file), "utf8");
        for (const list of stringListLiterals(text)) {
          if ([stages, reasons, outcomes].some((names) => list.every((name) => names.has(name)))) offending.push(`${file}: [${list.join(", ")}]`);
        }
      }
    }
    expect(offending).toEqual([]);
  });

  it("the list module is plain constants: it imports nothing", async () => {
    expect(await importsOf(`${CONTRACT}.ts`)).toEqual([]);
  });

  it("the SDK, CLI and MCP server use no server code at run time but the list module (router types only)", async () => {
    const offending: string[] = [];
    for (const file of await sourceFiles("packages/agent/src")) {
      for (const line of await importsOf(file)) {
        if (!line.target || line.target.startsWith(path.join("packages", "agent"))) continue;
        if (line.target === CONTRACT || line.typeOnly) continue;
        offending.push(`${file} imports ${line.specifier} at run time`);
      }
    }
    expect(offending).toEqual([]);
  });

  it("the dashboard's browser code imports server code only as types, besides the list module", async () => {
    const offending: string[] = [];
    for (const file of await sourceFiles("app")) {
      if (!(await readFile(path.join(repo, file), "utf8")).startsWith('"use client"')) continue;
      for (const line of await importsOf(file)) {
        if (!line.target?.startsWith(`server${path.sep}`)) continue;
        if (line.target === CONTRACT || line.typeOnly) continue;
        offending.push(`${file} imports ${line.specifier} at run time`);
      }
    }
    expect(offending).toEqual([]);
  });

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
