import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";

/*
 * `work-graph import FILE` with each format, on the example plans (examples/plans: tasks.json
 * was made by task-master itself), and MCP `create` with `items` (docs/api.md "Import").
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "packages", "agent", "bin", "work-graph.js");
const PLANS = path.join(ROOT, "examples", "plans");

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
let operator: Awaited<ReturnType<typeof callerAs>>;
let agentToken: string;
let scratch: string;

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer(database.instance);
  operator = await callerAs(database.instance, "operator");
  agentToken = (await callerAs(database.instance, "agent", "plan-agent")).token;
  scratch = await mkdtemp(path.join(os.tmpdir(), "work-graph-import-"));
});
afterAll(async () => {
  await server?.close();
  await database?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

interface Run { code: number; stdout: string; stderr: string }

function cli(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { NODE_ENV: "test", PATH: process.env.PATH, HOME: scratch, WORK_GRAPH_URL: server.url, WORK_GRAPH_TOKEN: operator.token },
      timeout: 30_000,
    }, (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr }));
  });
}

interface Outcome { created: { id: string; title: string; parentId: string | null; dependsOn: string[]; priority: number; externalId: string | null; stage: string }[]; existing: { ref: string; id: string }[]; refs: Record<string, string> }
const outcome = (run: Run): Outcome => {
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Outcome;
};
const count = async () => Number((await database.db.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM work_items`)[0]!.n);

describe("work-graph import", () => {
  it("JSON: a dry run shows the tree and writes nothing; the import creates it; a re-run lists every item as existing", async () => {
    const file = path.join(PLANS, "release.json");
    const before = await count();
    const dry = await cli(["import", file, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^Dry run: would create 6 items \(json\)\./);
    expect(dry.stdout).toMatch(/\n {2}\S+ +Migrate invoices to the new ledger\n/);
    expect(await count()).toBe(before);

    const made = outcome(await cli(["import", file, "--json"]));
    expect(made.created.map((item) => item.title)).toEqual([
      "Release 2.4", "Migrate invoices to the new ledger", "Backfill historical invoices", "Show ledger balances in the account page",
      "Write the release notes", "Announce the release",
    ]);
    expect(made.created[2]).toMatchObject({ parentId: made.refs.release, dependsOn: [made.refs.migrate], priority: 5, stage: "blocked" });
    expect(made.created[5]!.stage).toBe("blocked");

    const again = await cli(["import", file]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^Created 0 items; 6 existed already \(json\)\./);
    expect(again.stdout).toContain(`${made.refs.release}`);
    expect(again.stdout.match(/\(existing\)/g)).toHaveLength(6);
    expect(await count()).toBe(before + 6);
  });

  it("YAML, with --project", async () => {
    const admin = await callerAs(database.instance, "admin");
    await admin.api.projects.create({ id: "people-ops", name: "People ops" });
    const made = outcome(await cli(["import", path.join(PLANS, "onboarding.yaml"), "--project", "people-ops", "--json"]));
    expect(made.created).toHaveLength(5);
    expect(made.created.every((item) => item.externalId?.startsWith("onboarding"))).toBe(true);
    const walkthrough = made.created.find((item) => item.title === "Walk through the pipeline code")!;
    expect(walkthrough.dependsOn.sort()).toEqual([made.refs.accounts, made.refs.laptop].sort());
    expect((await operator.api.workItems.get({ id: made.refs.onboarding! })).projectId).toBe("people-ops");
  });

  it("task-master tasks.json made by task-master (tagged): done tasks left out, subtasks as children, priorities mapped", async () => {
    const made = outcome(await cli(["import", path.join(PLANS, "tasks.json"), "--json"]));
    const byExternal = Object.fromEntries(made.created.map((item) => [item.externalId, item]));
    expect(Object.keys(byExternal).sort()).toEqual(["task-master:2", "task-master:3", "task-master:3.2", "task-master:3.3", "task-master:4", "task-master:4.1", "task-master:5"]);
    expect(byExternal["task-master:2"]).toMatchObject({ priority: 2, dependsOn: [], stage: "ready" }); // its dependency, task 1, is done
    expect(byExternal["task-master:3"]).toMatchObject({ priority: 1, dependsOn: [made.refs["task-master:2"]] });
    expect(byExternal["task-master:3.3"]).toMatchObject({ parentId: made.refs["task-master:3"], dependsOn: [made.refs["task-master:3.2"]] });
    expect(byExternal["task-master:3.2"]).toMatchObject({ dependsOn: [] }); // 3.1 is done
    expect(byExternal["task-master:5"]).toMatchObject({ priority: 0 });
  });

  it("task-master's older top-level form: numeric ids, sibling subtask dependencies, cancelled left out", async () => {
    // Its task ids overlap the tagged file's: in the same project, those would be found as existing.
    await (await callerAs(database.instance, "admin")).api.projects.create({ id: "legacy", name: "Legacy" });
    const made = outcome(await cli(["import", path.join(PLANS, "tasks-legacy.json"), "--project", "legacy", "--json"]));
    const byExternal = Object.fromEntries(made.created.map((item) => [item.externalId, item]));
    expect(Object.keys(byExternal).sort()).toEqual(["task-master:2", "task-master:2.1", "task-master:2.2", "task-master:3", "task-master:4"]);
    expect(byExternal["task-master:2.2"]).toMatchObject({ parentId: made.refs["task-master:2"], dependsOn: [made.refs["task-master:2.1"]] });
    expect(byExternal["task-master:4"]!.dependsOn.sort()).toEqual([made.refs["task-master:2"], made.refs["task-master:2.2"]].sort());
  });

  it("Markdown: nested lists are children, numbered lists sequences, ticked items left out, externalId md:<file>:<path>", async () => {
    const made = outcome(await cli(["import", path.join(PLANS, "launch-checklist.md"), "--json"]));
    const titles = made.created.map((item) => item.title);
    expect(titles).not.toContain("Buy the domain");
    expect(titles).not.toContain("Open the firewall");
    expect(titles).toHaveLength(13);
    const byTitle = Object.fromEntries(made.created.map((item) => [item.title, item]));
    expect(byTitle["Install TLS certificates"]).toMatchObject({
      parentId: byTitle["Prepare the new host"]!.id, externalId: "md:launch-checklist.md:Prepare the new host/Install TLS certificates",
    });
    expect(byTitle["Export the CMS content"]!.dependsOn).toEqual([byTitle["Announce the freeze to the editors"]!.id]);
    expect(byTitle["Raise the DNS TTL again"]!.dependsOn).toEqual([byTitle["Check every page for broken links"]!.id]);
    expect(byTitle["Documentation"]!.parentId).toBe(byTitle["Check every page for broken links"]!.id);
    expect(byTitle["Announce the freeze to the editors"]!.dependsOn).toEqual([]);
  });

  it("a refused import names the offending item with its place in the file, and writes nothing", async () => {
    const file = path.join(scratch, "broken.md");
    await writeFile(file, "# Plan\n\n- First step\n- Second step\n  1. Part one\n  2. Part two\n");
    await writeFile(path.join(scratch, "broken.json"), JSON.stringify({ items: [{ ref: "a", title: "A" }, { ref: "b", title: "B", dependsOn: ["missing-item"] }] }));
    const before = await count();
    const run = await cli(["import", path.join(scratch, "broken.json")]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/NOT_FOUND: .*"b".*missing-item.*\(.*broken\.json: item 2, "B"\)/);
    const asJson = await cli(["import", path.join(scratch, "broken.json"), "--json"]);
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: { reason: "NOT_FOUND", detail: { ref: "b" } } });
    const unreadable = await cli(["import", path.join(scratch, "nope.yaml")]);
    expect(unreadable.code).toBe(2);
    await writeFile(path.join(scratch, "bad.yaml"), "items: [ {ref: a\n");
    expect((await cli(["import", path.join(scratch, "bad.yaml")])).stderr).toMatch(/not valid YAML/);
    expect(await count()).toBe(before);
    expect(outcome(await cli(["import", file, "--json"])).created).toHaveLength(4);
  });
});

describe("MCP create with items", () => {
  it("creates a small plan through workItems.import, all or nothing, with an operator's token", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath, args: [BIN, "mcp"], cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", WORK_GRAPH_URL: server.url, WORK_GRAPH_TOKEN: operator.token }, stderr: "pipe",
    });
    const client = new Client({ name: "work-graph-import-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const call = async (args: Record<string, unknown>) => {
        const result = await client.callTool({ name: "create", arguments: args }, undefined, { timeout: 60_000 });
        return { isError: result.isError as boolean | undefined, text: (result.content as { text: string }[]).map((part) => part.text).join("\n"), data: result.structuredContent as unknown as Outcome };
      };
      const made = await call({ items: [
        { ref: "spec", title: "Write the spec" },
        { ref: "build", title: "Build it", dependsOn: ["spec"] },
        { ref: "test", title: "Test it", parent: "build" },
      ] });
      expect(made.isError).toBeFalsy();
      expect(made.text).toMatch(/^Created 3 item\(s\)\./);
      expect(made.data.created.map((item) => item.stage)).toEqual(["ready", "waiting_on_children", "blocked"]);
      const before = await count();
      const refused = await call({ items: [{ ref: "x", title: "X" }, { ref: "y", title: "Y", dependsOn: ["y"] }] });
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/^DEPENDENCY_CYCLE/);
      expect(await count()).toBe(before);
      expect((await call({ title: "Both", items: [{ ref: "z", title: "Z" }] })).text).toMatch(/^VALIDATION/);
      expect((await call({ title: "Just one" })).text).toMatch(/^Created /);
    } finally {
      await client.close();
    }
  });

  it("with an agent token, items are refused (imports are an operator's) and nothing is written", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath, args: [BIN, "mcp"], cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", WORK_GRAPH_URL: server.url, WORK_GRAPH_TOKEN: agentToken }, stderr: "pipe",
    });
    const client = new Client({ name: "work-graph-import-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const before = await count();
      const result = await client.callTool({ name: "create", arguments: { items: [{ ref: "a", title: "A" }] } }, undefined, { timeout: 60_000 });
      expect(result.isError).toBe(true);
      expect((result.content as { text: string }[]).map((part) => part.text).join("\n")).toMatch(/^FORBIDDEN/);
      expect(await count()).toBe(before);
    } finally {
      await client.close();
    }
  });
});
