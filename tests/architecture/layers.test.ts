import path from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf, sourceFiles } from "./support";

/*
 * Layering (issue 11 item 7): reads (server/queries) never reach into writes
 * (server/operations), and each tRPC router stands alone: only server/trpc/root.ts puts them
 * together. Static checks over the import lines.
 */

/** Every import of a source file under `dir` whose target `forbidden` matches, as "file imports specifier". */
async function importsUnder(dir: string, forbidden: (target: string) => boolean): Promise<{ files: number; offending: string[] }> {
  const files = await sourceFiles(dir);
  const offending: string[] = [];
  for (const file of files) {
    for (const line of await importsOf(file)) {
      if (line.target && forbidden(line.target)) offending.push(`${file} imports ${line.specifier}`);
    }
  }
  return { files: files.length, offending };
}

describe("import layering", () => {
  it("server/queries imports nothing from server/operations", async () => {
    const { files, offending } = await importsUnder("server/queries", (target) => target.startsWith(`server${path.sep}operations`));
    expect(files).toBeGreaterThan(5);
    expect(offending).toEqual([]);
  });

  it("no router imports another router", async () => {
    const { files, offending } = await importsUnder(
      "server/trpc/routers",
      (target) => target.startsWith(`server${path.sep}trpc${path.sep}routers${path.sep}`) || target === path.join("server", "trpc", "root"),
    );
    expect(files).toBeGreaterThan(3);
    expect(offending).toEqual([]);
  });
});
