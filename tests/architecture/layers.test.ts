import path from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf, sourceFiles } from "./support";

/*
 * Layering (issue 11 item 7): reads (server/queries) never reach into writes
 * (server/operations), and each tRPC router stands alone: only server/trpc/root.ts puts them
 * together. Static checks over the import lines.
 */

describe("import layering", () => {
  it("server/queries imports nothing from server/operations", async () => {
    const files = await sourceFiles("server/queries");
    expect(files.length).toBeGreaterThan(5);
    const offending: string[] = [];
    for (const file of files) {
      for (const line of await importsOf(file)) {
        if (line.target?.startsWith(`server${path.sep}operations`)) offending.push(`${file} imports ${line.specifier}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it("no router imports another router", async () => {
    const files = await sourceFiles("server/trpc/routers");
    expect(files.length).toBeGreaterThan(3);
    const offending: string[] = [];
    for (const file of files) {
      for (const line of await importsOf(file)) {
        if (line.target?.startsWith(`server${path.sep}trpc${path.sep}routers${path.sep}`) || line.target === path.join("server", "trpc", "root")) {
          offending.push(`${file} imports ${line.specifier}`);
        }
      }
    }
    expect(offending).toEqual([]);
  });
});
