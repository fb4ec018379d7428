import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";

/*
 * The CLI speaks the queue policy (issue 24 item 6): --project (default $WORK_GRAPH_PROJECT),
 * --requires, --capability, --concurrency-key, --not-before/--delay, hand-back, update, limits,
 * projects; LIMIT_REACHED exits 6 like NOT_CLAIMABLE.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "packages", "agent", "bin", "work-graph.js");
const OFFLINE = { WORK_GRAPH_URL: "http://127.0.0.1:9" };

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
let stateDir: string;
const tokens: Record<"operator" | "admin" | "agent", string> = { operator: "", admin: "", agent: "" };

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer(database.instance);
  stateDir = await mkdtemp(path.join(os.tmpdir(), "work-graph-cli-policy-"));
  tokens.operator = (await callerAs(database.instance, "operator")).token;
  tokens.admin = (await callerAs(database.instance, "admin")).token;
  tokens.agent = (await callerAs(database.instance, "agent", "cli-plain-agent")).token;
});
afterAll(async () => {
  await server?.close();
  await database?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI as a child process; `as` is a role of `tokens` or a token itself. */
function cli(as: keyof typeof tokens | string | null, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const token = as === null ? undefined : (tokens as Record<string, string>)[as] ?? as;
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: {
        NODE_ENV: "test",
        PATH: process.env.PATH,
        HOME: stateDir,
        WORK_GRAPH_URL: server.url,
        WORK_GRAPH_STATE: path.join(stateDir, "state.json"),
        ...(token ? { WORK_GRAPH_TOKEN: token } : {}),
        ...env,
      },
      timeout: 30_000,
    }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

const json = <T = Record<string, unknown>>(run: Run): T => {
  expect(run.stderr).toBe("");
  return JSON.parse(run.stdout) as T;
};

async function rememberedItems() {
  const file = JSON.parse(await readFile(path.join(stateDir, "state.json"), "utf8")) as { leases: Record<string, { workItemId: string }> };
  return Object.values(file.leases).map((lease) => lease.workItemId);
}

describe("work-graph CLI: queue policy without a server", () => {
  it("documents hand-back, update, limits and projects in help, and when to hand back versus ask in prime", async () => {
    const help = await cli(null, ["help"], OFFLINE);
    expect(help.code).toBe(0);
    for (const usage of [
      "hand-back <item> --reason R [--retry-after S]",
      "update <item> [--title T]",
      "limits set <key> <n>",
      "limits delete <key>",
      "limits list",
      "projects create <id> <name>",
      "projects list",
      "--concurrency-key K",
      "[--not-before TIME | --delay S]",
      "$WORK_GRAPH_PROJECT",
      "NOT_CLAIMABLE or LIMIT_REACHED",
    ]) expect(help.stdout).toContain(usage);
    const claimHelp = await cli(null, ["claim", "--help"], OFFLINE);
    for (const option of ["--project <P>", "--capability <C>"]) expect(claimHelp.stdout).toContain(option);
    const prime = await cli(null, ["prime"], OFFLINE);
    expect(prime.stdout).toContain('work-graph hand-back <item> --reason "<why you cannot do it>" [--retry-after <seconds>]');
    expect(prime.stdout).toContain("Hand back, ask or cancel?");
  });

  it("refuses contradictory or empty flags before calling the server (exit 2)", async () => {
    const both = await cli("operator", ["create", "--title", "T", "--not-before", "2030-01-01T00:00:00Z", "--delay", "60"], OFFLINE);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give --not-before or --delay, not both");
    const notATime = await cli("operator", ["create", "--title", "T", "--not-before", "tomorrow"], OFFLINE);
    expect(notATime.code).toBe(2);
    expect(notATime.stderr).toContain("ISO-8601");
    const nothing = await cli("operator", ["update", "some-item"], OFFLINE);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain("nothing to change");
    const clearAndSet = await cli("operator", ["update", "some-item", "--not-before", "2030-01-01T00:00:00Z", "--clear-not-before"], OFFLINE);
    expect(clearAndSet.code).toBe(2);
    const noReason = await cli("agent", ["hand-back", "some-item"], OFFLINE);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain("--reason is required");
  });
});

describe("work-graph CLI: queue policy", () => {
  it("projects, capability tokens, items with requires, keys and time gates, shown with their policy", async () => {
    expect(json(await cli("admin", ["projects", "create", "web", "Web shop", "--json"]))).toMatchObject({ id: "web", name: "Web shop" });
    const projects = await cli("operator", ["projects", "list"]);
    expect(projects.stdout).toMatch(/^id\s+name\s+created/);
    expect(projects.stdout).toMatch(/\nweb\s+Web shop\s/);
    expect(projects.stdout).toMatch(/\ndefault\s/);

    const created = await cli("operator", ["create", "--title", "Check the checkout", "--id", "checkout", "--requires", "browser", "--concurrency-key", "staging-db", "--delay", "600"],
      { WORK_GRAPH_PROJECT: "web" });
    expect(created).toMatchObject({ code: 0, stderr: "" });
    expect(created.stdout).toMatch(/^Created checkout \(scheduled \(in (9|10) min\)\)\.\n$/);
    const shown = await cli("operator", ["show", "checkout"]);
    expect(shown.stdout).toContain("stage scheduled (in ");
    expect(shown.stdout).toContain("project web, requires browser, concurrency key staging-db, not before 20");
    const item = json<{ projectId: string; requires: string[]; concurrencyKey: string; notBefore: string; stage: string }>(await cli("operator", ["show", "checkout", "--json"]));
    expect(item).toMatchObject({ workItem: { projectId: "web", requires: ["browser"], concurrencyKey: "staging-db", stage: "scheduled" } });

    // An operator's update opens the gate and changes what it needs.
    const updated = await cli("operator", ["update", "checkout", "--clear-not-before", "--requires", "browser,payments", "--json"]);
    expect(json(updated)).toMatchObject({ id: "checkout", stage: "ready", notBefore: null, requires: ["browser", "payments"], concurrencyKey: "staging-db" });
    const unkeyed = await cli("operator", ["update", "checkout", "--no-concurrency-key"]);
    expect(unkeyed.code).toBe(0);
    expect(unkeyed.stdout).toContain("concurrency key -");
    expect(json(await cli("operator", ["update", "checkout", "--concurrency-key", "staging-db", "--json"]))).toMatchObject({ concurrencyKey: "staging-db" });

    const minted = await cli("admin", ["tokens", "create", "--role", "agent", "--worker-id", "cli-browser", "--capability", "browser", "--capability", "payments", "--project", "web", "--json"]);
    const browserToken = json<{ token: string }>(minted).token;
    const listed = await cli("admin", ["tokens", "list"]);
    expect(listed.stdout).toMatch(/agent\s+cli-browser\s+\S+\s+web\s+browser,payments\s/);

    // A worker without the capabilities never takes it; one with them does, and only within them.
    const plain = await cli("agent", ["claim", "checkout"]);
    expect(plain.code).toBe(6);
    expect(plain.stderr).toContain("it requires browser, payments, which this claim lacks");
    const outside = await cli(browserToken, ["claim", "--capability", "gpu"]);
    expect(outside.code).toBe(3); // FORBIDDEN: not among the token's capabilities
    expect((await cli(browserToken, ["claim", "--capability", "browser"])).code).toBe(6); // payments is missing: nothing to claim

    // The queue shows what each would take.
    expect(json<{ id: string }[]>(await cli("agent", ["queue", "--json"])).map((entry) => entry.id)).not.toContain("checkout");
    const narrowed = await cli(browserToken, ["queue", "--capability", "browser", "--json"]);
    expect(json<{ id: string }[]>(narrowed).map((entry) => entry.id)).not.toContain("checkout");
    const queue = await cli(browserToken, ["queue"], { WORK_GRAPH_PROJECT: "web" });
    expect(queue.stdout).toMatch(/checkout\s+0\s+web\s+browser,payments\s+staging-db/);
    const claimed = await cli(browserToken, ["claim", "--json"], { WORK_GRAPH_PROJECT: "web" });
    expect(json(claimed)).toMatchObject({ workItem: { id: "checkout", projectId: "web" } });

    expect((await cli("operator", ["workers"])).stdout).toMatch(/\ncli-browser\s.*\sbrowser,payments\n/);
    await cli("operator", ["create", "--title", "Elsewhere", "--id", "elsewhere"]);
    const webEvents = json<{ items: { workItemId: string }[] }>(await cli("operator", ["events", "--json"], { WORK_GRAPH_PROJECT: "web" }));
    expect(new Set(webEvents.items.map((event) => event.workItemId))).toEqual(new Set(["checkout"]));
  });

  it("hand-back ends the lease returned, forgets it, and --retry-after schedules the item", async () => {
    const { token } = await (await callerAs(database.instance, "admin")).api.tokens.create({ role: "agent", workerId: "cli-returner", capabilities: ["browser", "payments"] });
    await cli("operator", ["create", "--title", "Cannot be done here", "--id", "hand-me-back", "--priority", "100"]);
    const claimed = await cli(token, ["claim", "hand-me-back"]);
    expect(claimed.code).toBe(0);
    expect(claimed.stdout).toContain("work-graph hand-back hand-me-back --reason");
    expect(await rememberedItems()).toContain("hand-me-back");

    const handedBack = await cli(token, ["hand-back", "hand-me-back", "--reason", "no access to the staging database", "--retry-after", "300"]);
    expect(handedBack).toMatchObject({ code: 0, stderr: "" });
    expect(handedBack.stdout).toMatch(/^Handed hand-me-back back \(lease epoch 1 ended, returned\)\. It is scheduled \(in (4|5) min\)\. Stop working on it\.\n$/);
    expect(await rememberedItems()).not.toContain("hand-me-back");
    const history = json<{ outcome: string }[]>(await cli("operator", ["history", "hand-me-back", "--json"]));
    expect(history.map((lease) => lease.outcome)).toEqual(["returned"]);
    const events = json<{ items: { type: string; data: Record<string, unknown> }[] }>(await cli("operator", ["events", "--item", "hand-me-back", "--json"]));
    expect(events.items.find((event) => event.type === "lease.ended")!.data).toMatchObject({ reason: "no access to the staging database", retryAfterSeconds: 300 });

    // The lease is gone: a second hand-back (or any write) is refused locally, exit 5.
    expect((await cli(token, ["hand-back", "hand-me-back", "--reason", "again"])).code).toBe(5);
    // Scheduled: a named claim says until when.
    const early = await cli(token, ["claim", "hand-me-back"]);
    expect(early.code).toBe(6);
    expect(early.stderr).toMatch(/The item is scheduled until 20/);
  });

  it("limits: set, list, a named claim on a full key exits 6 with LIMIT_REACHED, delete", async () => {
    const set = await cli("operator", ["limits", "set", "ci-runner", "1"]);
    expect(set).toMatchObject({ code: 0, stdout: "ci-runner: at most 1 live lease (0 live now).\n" });
    await cli("operator", ["create", "--title", "CI job 1", "--id", "ci-1", "--concurrency-key", "ci-runner"]);
    await cli("operator", ["create", "--title", "CI job 2", "--id", "ci-2", "--concurrency-key", "ci-runner"]);
    expect((await cli("agent", ["claim", "ci-1"])).code).toBe(0);
    const list = await cli("operator", ["limits", "list"]);
    expect(list.stdout).toMatch(/^key\s+limit\s+live\s+updated\n/);
    expect(list.stdout).toMatch(/\nci-runner\s+1\s+1\s/);

    const full = await cli("agent", ["claim", "ci-2"]);
    expect(full.code).toBe(6);
    expect(full.stderr).toContain("LIMIT_REACHED");
    expect(full.stderr).toContain("Concurrency key ci-runner is full (1 of 1 live leases)");
    const fullJson = await cli("agent", ["claim", "ci-2", "--json"]);
    expect(JSON.parse(fullJson.stderr)).toMatchObject({ error: { reason: "LIMIT_REACHED", detail: { key: "ci-runner", maxLeases: 1, liveLeases: 1 } } });

    expect(await cli("operator", ["limits", "delete", "ci-runner"])).toMatchObject({ code: 0, stdout: "ci-runner is unlimited again.\n" });
    expect((await cli("operator", ["limits", "list"])).stdout).toBe("No limits: every concurrency key is unlimited.\n");
    expect((await cli("agent", ["claim", "ci-2"])).code).toBe(0);
  });
});
