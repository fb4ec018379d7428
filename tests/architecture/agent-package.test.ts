import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

/*
 * One place for each thing in the agent package (issue 23 item 1): leases are held, renewed,
 * handed back and refused locally only in sdk/lease-holder.ts, and calls are retried only
 * through sdk/retry.ts. runWorker, the MCP server and the CLI all use both. Static checks over
 * the source, so a second lease holder or a second retry loop fails here.
 */

const repo = path.resolve(import.meta.dirname, "../..");
const SOURCE = path.join("packages", "agent", "src");
const LEASE_MODULE = path.join(SOURCE, "sdk", "lease-holder.ts");
const RETRY_MODULE = path.join(SOURCE, "sdk", "retry.ts");

async function sources(): Promise<Map<string, string>> {
  const entries = await readdir(path.join(repo, SOURCE), { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile() && entry.name.endsWith(".ts")).map((entry) => path.relative(repo, path.join(entry.parentPath, entry.name)));
  return new Map(await Promise.all(files.sort().map(async (file) => [file, await readFile(path.join(repo, file), "utf8")] as const)));
}

/** Files whose text matches `pattern`, with the number of matches. */
async function filesMatching(pattern: RegExp): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  for (const [file, text] of await sources()) {
    const count = [...text.matchAll(new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`))].length;
    if (count > 0) found[file] = count;
  }
  return found;
}

describe("the agent package holds leases in one module", () => {
  it("only the lease module renews a lease (background renewals, renew now, hand back)", async () => {
    expect(Object.keys(await filesMatching(/\.leases\.renew\b/))).toEqual([LEASE_MODULE]);
  });

  it("only the lease module hands an item back (leases.handBack, and its fallback for older servers)", async () => {
    expect(Object.keys(await filesMatching(/\.leases\.handBack\b/))).toEqual([LEASE_MODULE]);
  });

  it("only the lease module builds the local LEASE_NOT_CURRENT error, and only once", async () => {
    expect(await filesMatching(/new\s+WorkGraphError\(\s*["'`]LEASE_NOT_CURRENT/)).toEqual({ [LEASE_MODULE]: 1 });
  });

  it("only the lease module marks a remembered lease fenced", async () => {
    expect(Object.keys(await filesMatching(/\.fence\(/))).toEqual([LEASE_MODULE]);
  });

  it("runWorker, the MCP server and the CLI all hold their leases through it", async () => {
    const files = await sources();
    for (const user of ["sdk/worker.ts", "mcp/server.ts", "cli/context.ts"]) {
      expect(files.get(path.join(SOURCE, ...user.split("/"))), user).toMatch(/from "(\.\/|\.\.\/sdk\/)lease-holder"/);
    }
  });
});

describe("the agent package retries in one module", () => {
  it("no retry loop outside the retry module: no loop counting attempts", async () => {
    expect(Object.keys(await filesMatching(/for\s*\(\s*let\s+attempts?\b|\battempts?\s*(\+\+|\+=)/))).toEqual([RETRY_MODULE]);
  });

  it("no backoff outside the retry module: no doubling, no exponent, no jitter", async () => {
    expect(Object.keys(await filesMatching(/\b2\s*\*\*|Math\.pow\(\s*2|\*=?\s*2\b(?!\.)|Math\.random\(/))).toEqual([RETRY_MODULE]);
  });

  it("the HTTP client, runWorker, the MCP server and the CLI all retry through it", async () => {
    const files = await sources();
    for (const user of ["sdk/client.ts", "sdk/worker.ts", "mcp/server.ts", "cli/commands/leases.ts"]) {
      expect(files.get(path.join(SOURCE, ...user.split("/"))), user).toMatch(/from "(\.\/|\.\.\/|\.\.\/\.\.\/)(sdk\/)?retry"/);
    }
  });
});
