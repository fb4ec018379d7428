import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PACKAGE = path.join(ROOT, "packages", "agent");
const TSC = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");

let scratch: string;
let project: string;

function run(command: string, args: string[], cwd: string, timeout = 240_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, timeout, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, NODE_ENV: "production" } }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(" ")} failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), "work-graph-pack-"));
  project = path.join(scratch, "consumer");
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("the @work-graph/agent package", () => {
  it("packs, installs into an empty project without server dependencies, type-checks, and runs prime and mcp there", async () => {
    // `npm pack` runs the package's prepack: the full build, types included.
    const [packed] = JSON.parse(await run("npm", ["pack", "--json", "--pack-destination", scratch], PACKAGE)) as { filename: string; files: { path: string }[] }[];
    const files = packed!.files.map((file) => file.path).sort();
    expect(files).toEqual(expect.arrayContaining(["bin/work-graph.js", "dist/cli.js", "dist/index.js", "dist/index.d.ts", "package.json"]));
    expect(files.filter((file) => file.startsWith("src/") || file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([]);

    await run("mkdir", ["-p", project], scratch);
    await writeFile(path.join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    // Offline-first: the dependencies come from npm's cache; the registry only for what the cache lacks.
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", path.join(scratch, packed!.filename)], project);
    for (const serverOnly of ["next", "@prisma/client", "prisma", "pg", "react"]) {
      expect(existsSync(path.join(project, "node_modules", serverOnly)), serverOnly).toBe(false);
    }

    // skipLibCheck as in most projects: @trpc/server's own declarations want @types/node and ws.
    // The @ts-expect-error lines below fail the check if our types degraded to `any`.
    await writeFile(path.join(project, "tsconfig.json"), JSON.stringify({
      compilerOptions: { strict: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2023", "DOM"], types: [], noEmit: true, skipLibCheck: true },
      include: ["agent.ts"],
    }));
    await writeFile(path.join(project, "agent.ts"), `
import { createWorkGraphClient, runWorker, WorkGraphError, type WorkItem, type Lease } from "@work-graph/agent";

const client = createWorkGraphClient({ url: "http://localhost:3000", token: "wga_example" });

export async function firstReady(): Promise<WorkItem | undefined> {
  const [item] = await client.workItems.queue.query({ limit: 1 });
  return item;
}

export async function epochOf(id: string): Promise<number | undefined> {
  const item = await client.workItems.get.query({ id });
  const lease: Lease | null = item.currentLease;
  return lease?.epoch;
}

export const work = () => runWorker({
  client,
  durationSeconds: 60,
  handler: async (context) => {
    await context.note(\`working on \${context.workItem.title}\`);
    return { evidence: "done" };
  },
});

export const fenced = (error: unknown) => error instanceof WorkGraphError && error.reason === "LEASE_NOT_CURRENT";

// The router's input types are enforced in the installed package:
// @ts-expect-error durationSeconds is a number
void client.leases.claim.mutate({ durationSeconds: "soon" });
// @ts-expect-error no such procedure
void client.leases.steal;
`);
    await run(process.execPath, [TSC, "-p", project], project);

    const bin = path.join(project, "node_modules", ".bin", "work-graph");
    const prime = await run(bin, ["prime"], project);
    expect(prime).toContain("You hold an item through a LEASE that expires.");

    const transport = new StdioClientTransport({
      command: bin,
      args: ["mcp"],
      cwd: project,
      env: { PATH: process.env.PATH ?? "", WORK_GRAPH_URL: "http://127.0.0.1:9", WORK_GRAPH_TOKEN: "wga_not_used_by_initialize" },
      stderr: "pipe",
    });
    const client = new Client({ name: "pack-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe("work-graph");
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(["ask", "cancel", "claim", "create", "decompose", "hand_back", "note", "queue", "release", "show"]);
    } finally {
      await client.close();
    }
  }, 300_000);
});
