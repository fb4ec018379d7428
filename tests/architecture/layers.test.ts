import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cruiseWithRules, violationsOf } from "./support";

/*
 * Layering (issue 11 item 7, issue 23 item 6), by dependency-cruiser with the rules of
 * .dependency-cruiser.mjs: no import cycle; reads (server/queries) never reach into writes
 * (server/operations); the lease core (operations, domain, sql, queries, realtime, database)
 * never imports an integration (server/integrations); each tRPC router stands alone (only
 * server/trpc/root.ts puts them together); packages/contract imports none of the code base; the
 * agent package uses no server or dashboard code at all (its types come from the contract), the
 * dashboard's browser code none at run time.
 */

const RULES = [
  "no-circular",
  "queries-never-import-operations",
  "core-never-imports-integrations",
  "routers-stand-alone",
  "contract-imports-nothing",
  "agent-package-no-server-runtime",
  "browser-code-no-server-runtime",
];

describe("import layering", () => {
  it("the code base breaks none of the rules", async () => {
    const result = await cruiseWithRules();
    const modules = result.modules.map((module) => module.source);
    // Every layer the rules speak of was read (a wrong path would make a rule vacuous).
    for (const [layer, atLeast] of [["server/queries/", 5], ["server/operations/", 5], ["server/integrations/", 5], ["server/trpc/routers/", 4], ["packages/agent/src/", 5], ["packages/contract/src/", 5], ["app/", 20]] as const) {
      expect(modules.filter((source) => source.startsWith(layer)).length, layer).toBeGreaterThanOrEqual(atLeast);
    }
    expect(modules).toContain("packages/contract/src/constants.ts");
    expect(result.summary.error, violationsOf(result).join("\n")).toBe(0);
    expect(violationsOf(result)).toEqual([]);
    expect(result.summary.ruleSetUsed?.forbidden?.map((rule) => rule.name).sort()).toEqual([...RULES].sort());
  });

  describe("each rule fails on a violation", () => {
    const fixture = mkdtempSync(path.join(os.tmpdir(), "wg-layers-"));
    afterAll(() => rmSync(fixture, { recursive: true, force: true }));
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(fixture, file)), { recursive: true });
      writeFileSync(path.join(fixture, file), text);
    };

    it("finds a cycle, a query importing an operation, the core importing an integration, routers importing each other or the root, an importing contract module, server code in the SDK and server code at run time in browser code", async () => {
      write("server/db.ts", "export const db = 1;\n");
      write("server/a.ts", 'import { b } from "./b";\nexport const a = b;\n');
      write("server/b.ts", 'import type { a } from "./a";\nexport const b = 1 as typeof a;\n');
      write("server/operations/claim.ts", "export const claim = 1;\n");
      write("server/queries/items.ts", 'import { claim } from "../operations/claim";\nexport const items = claim;\n');
      write("server/integrations/chat/statements.ts", "export const post = 1;\n");
      write("server/operations/hand-back.ts", 'import { post } from "../integrations/chat/statements";\nexport const handBack = post;\n');
      write("server/sql/leases.ts", 'import { post } from "../integrations/chat/statements";\nexport const leases = post;\n');
      write("server/trpc/root.ts", 'export const root = 1;\n');
      write("server/trpc/routers/notes.ts", 'import { root } from "../root";\nexport const notes = root;\n');
      write("server/trpc/routers/events.ts", 'import { notes } from "./notes";\nexport const events = notes;\n');
      write("packages/contract/src/constants.ts", 'import { db } from "../../../server/db";\nexport const STAGES = [db];\n');
      write("packages/agent/src/sdk/client.ts", 'import { db } from "../../../../server/db";\nimport type { root } from "../../../../server/trpc/root";\nexport const client: typeof root = db;\n');
      // A name the rule's list of "use client" files holds (read from the real app/).
      write("app/_components/shell.tsx", '"use client";\nimport { db } from "../../server/db";\nimport { STAGES } from "../../packages/contract/src/constants";\nexport const shell = [db, STAGES];\n');
      const found = violationsOf(await cruiseWithRules(["server", "packages", "app"], fixture));
      // The contract from browser code passes, and so do the server's types; the agent package may not import the server's types either.
      expect(found.sort()).toEqual(
        [
          "agent-package-no-server-runtime: packages/agent/src/sdk/client.ts → server/db.ts",
          "agent-package-no-server-runtime: packages/agent/src/sdk/client.ts → server/trpc/root.ts",
          "browser-code-no-server-runtime: app/_components/shell.tsx → server/db.ts",
          "contract-imports-nothing: packages/contract/src/constants.ts → server/db.ts",
          "core-never-imports-integrations: server/operations/hand-back.ts → server/integrations/chat/statements.ts",
          "core-never-imports-integrations: server/sql/leases.ts → server/integrations/chat/statements.ts",
          "no-circular: server/a.ts → server/b.ts (cycle server/b.ts → server/a.ts)",
          "queries-never-import-operations: server/queries/items.ts → server/operations/claim.ts",
          "routers-stand-alone: server/trpc/routers/events.ts → server/trpc/routers/notes.ts",
          "routers-stand-alone: server/trpc/routers/notes.ts → server/trpc/root.ts",
        ].sort(),
      );
    });
  });
});
