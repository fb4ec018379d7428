import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { advanceClockPast } from "../support/fixtures";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "packages", "agent", "bin", "work-graph.js");

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
let stateDir: string;
const tokens: Record<"operator" | "admin" | "agent" | "agentB", string> = { operator: "", admin: "", agent: "", agentB: "" };

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer(database.instance);
  stateDir = await mkdtemp(path.join(os.tmpdir(), "work-graph-cli-"));
  tokens.operator = (await callerAs(database.instance, "operator")).token;
  tokens.admin = (await callerAs(database.instance, "admin")).token;
  tokens.agent = (await callerAs(database.instance, "agent", "cli-agent")).token;
  tokens.agentB = (await callerAs(database.instance, "agent", "cli-agent-b")).token;
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

/** The CLI as a child process (async: the API server runs in this process). */
function cli(as: keyof typeof tokens | null, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: {
        NODE_ENV: "test",
        PATH: process.env.PATH,
        HOME: stateDir,
        WORK_GRAPH_URL: server.url,
        WORK_GRAPH_STATE: path.join(stateDir, "state.json"),
        ...(as ? { WORK_GRAPH_TOKEN: tokens[as] } : {}),
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

async function rememberedLeases() {
  const file = JSON.parse(await readFile(path.join(stateDir, "state.json"), "utf8")) as { leases: Record<string, { leaseId: string; epoch: number }> };
  return Object.values(file.leases);
}

describe("work-graph CLI", () => {
  it("runs the whole flow: create → claim → note → attention request → resolve → claim → release", async () => {
    const created = await cli("operator", ["create", "--title", "Write the docs", "--id", "docs", "--priority", "5", "--json"]);
    expect(created.code).toBe(0);
    expect(json(created)).toMatchObject({ id: "docs", stage: "ready", priority: 5 });
    const dependent = await cli("operator", ["create", "--title", "Ship it", "--id", "ship", "--depends-on", "docs"]);
    expect(dependent).toMatchObject({ code: 0, stdout: "Created ship (blocked).\n" });

    const queue = await cli("agent", ["queue"]);
    expect(queue.code).toBe(0);
    expect(queue.stdout).toMatch(/^#\s+id\s+priority/);
    expect(queue.stdout).toContain("docs");
    expect(queue.stdout).not.toContain("ship");

    const claimed = await cli("agent", ["claim"]);
    expect(claimed.code).toBe(0);
    expect(claimed.stdout).toContain("Claimed docs - Write the docs");
    expect(claimed.stdout).toMatch(/lease [0-9a-f-]{36} epoch 1, 15m, expires \d{4}-/);
    const [remembered] = await rememberedLeases();
    expect(remembered).toMatchObject({ epoch: 1 });

    // No lease ids or epochs on the command line from here on: the CLI finds them.
    const noted = await cli("agent", ["note", "docs", "outline", "done,", "writing", "sections"]);
    expect(noted).toMatchObject({ code: 0, stdout: "Noted on docs (epoch 1).\n" });
    const renewed = await cli("agent", ["renew", "docs", "--duration", "120", "--json"]);
    expect(renewed.code).toBe(0);
    expect(json(renewed)).toMatchObject({ id: remembered!.leaseId, epoch: 1, outcome: null });

    const asked = await cli("agent", [
      "attention", "request", "docs", "--kind", "decision", "--question", "Which format?", "--option", "markdown", "--option", "html",
      "--context", "Both are easy", "--json",
    ]);
    expect(asked.code).toBe(0);
    const request = json<{ request: { id: string; status: string; options: string[] }; endedLease: { outcome: string } }>(asked);
    expect(request.request).toMatchObject({ status: "open", options: ["markdown", "html"] });
    expect(request.endedLease.outcome).toBe("attention_requested");
    expect(await rememberedLeases()).toEqual([]);

    // The lease ended with the blocking request: a further write is fenced (exit 5), nothing sent with a dead lease.
    const tooLate = await cli("agent", ["note", "docs", "still here"]);
    expect(tooLate.code).toBe(5);
    expect(tooLate.stderr).toContain("LEASE_NOT_CURRENT");
    expect(tooLate.stderr).toContain("this session holds no lease on docs: claim it first");

    const listed = await cli("operator", ["attention", "list"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${request.request.id}  docs  [decision] blocking  open  by cli-agent`);
    expect(listed.stdout).toContain("options: markdown | html");
    const resolved = await cli("operator", ["attention", "resolve", request.request.id, "--resolution", "markdown, please"]);
    expect(resolved).toMatchObject({ code: 0, stdout: `Resolved ${request.request.id}. docs is now ready.\n` });

    const reclaimed = await cli("agent", ["claim", "docs"]);
    expect(reclaimed.code).toBe(0);
    expect(reclaimed.stdout).toContain("Claimed docs");
    expect(reclaimed.stdout).toContain("epoch 2");
    expect(reclaimed.stdout).toContain("[decision] Which format?\n    → markdown, please (by operator:");

    const released = await cli("agent", ["release", "docs", "--evidence", "README written; links checked", "--link", "https://example.test/docs"]);
    expect(released).toMatchObject({ code: 0, stdout: "Released docs. Lease epoch 2 ended (released).\n" });

    const history = await cli("operator", ["history", "docs", "--json"]);
    expect(json<{ epoch: number; workerId: string; outcome: string }[]>(history).map((lease) => [lease.epoch, lease.workerId, lease.outcome])).toEqual([
      [1, "cli-agent", "attention_requested"],
      [2, "cli-agent", "released"],
    ]);
    const historyTable = await cli("operator", ["history", "docs"]);
    expect(historyTable.stdout.split("\n")[0]).toMatch(/^epoch\s+worker\s+acquired\s+ended\s+outcome$/);
    const shown = await cli("operator", ["show", "docs"]);
    expect(shown.stdout).toContain("docs - Write the docs\n  stage released, status released, priority 5");
    expect(shown.stdout).toContain("cli-agent (epoch 1): outline done, writing sections");
    const ship = await cli("agent", ["show", "ship", "--json"]);
    expect(json<{ workItem: { stage: string } }>(ship).workItem.stage).toBe("ready");

    const events = await cli("operator", ["events", "--item", "docs", "--json"]);
    expect(json<{ items: { type: string }[] }>(events).items.map((event) => event.type)).toEqual(expect.arrayContaining([
      "work_item.created", "lease.claimed", "note.added", "lease.renewed", "attention.requested", "lease.ended",
    ]));
  });

  it("exits 5 when the lease was taken over (and says why), 3 when the lease is someone else's", async () => {
    await cli("operator", ["create", "--title", "Contested", "--id", "race", "--priority", "50"]);
    const claimed = await cli("agent", ["claim", "race", "--duration", "1", "--json"]);
    const { lease } = json<{ lease: { id: string; expiresAt: string } }>(claimed);
    await advanceClockPast(await database.connect(), lease.expiresAt);
    const takeover = await cli("agentB", ["claim", "race", "--json"]);
    expect(json<{ lease: { epoch: number } }>(takeover).lease.epoch).toBe(2);

    const fenced = await cli("agent", ["note", "race", "late progress", "--json"]);
    expect(fenced.code).toBe(5);
    expect(fenced.stdout).toBe("");
    expect(JSON.parse(fenced.stderr)).toMatchObject({
      error: { reason: "LEASE_NOT_CURRENT", code: "CONFLICT", detail: { kind: "superseded", leaseId: lease.id, epoch: 1 } },
    });
    // The fenced lease stays refused; worker B's current lease is never borrowed.
    const notMine = await cli("agent", ["release", "race", "--evidence", "mine?"]);
    expect(notMine.code).toBe(5);
    expect(notMine.stderr).toContain("was fenced (superseded)");
    // An explicit override still reaches the server, which refuses another worker's lease.
    const explicit = await cli("agent", ["release", "race", "--evidence", "mine?", "--lease-id", json<{ lease: { id: string } }>(takeover).lease.id]);
    expect(explicit.code).toBe(3);
    expect(explicit.stderr).toContain("FORBIDDEN");
    const history = await cli("operator", ["history", "race", "--json"]);
    expect(json<{ outcome: string | null }[]>(history).map((l) => l.outcome)).toEqual(["expired", null]);
  });

  it("a session writes only with a lease it claimed itself: after a takeover by another session of the same worker, it stays fenced", async () => {
    const sessionA = { WORK_GRAPH_STATE: path.join(stateDir, "session-a.json") };
    const sessionB = { WORK_GRAPH_STATE: path.join(stateDir, "session-b.json") };
    const fresh = { WORK_GRAPH_STATE: path.join(stateDir, "session-never-claimed.json") };
    await cli("operator", ["create", "--title", "Shared worker", "--id", "sessions", "--priority", "60"]);
    const claimedA = await cli("agent", ["claim", "sessions", "--duration", "1", "--json"], sessionA);
    const leaseA = json<{ lease: { id: string; expiresAt: string } }>(claimedA).lease;
    await advanceClockPast(await database.connect(), leaseA.expiresAt);
    const claimedB = await cli("agent", ["claim", "sessions", "--json"], sessionB);
    expect(json<{ lease: { epoch: number } }>(claimedB).lease.epoch).toBe(2);

    const fenced = await cli("agent", ["note", "sessions", "late progress", "--json"], sessionA);
    expect(fenced.code).toBe(5);
    expect(JSON.parse(fenced.stderr)).toMatchObject({ error: { reason: "LEASE_NOT_CURRENT", detail: { kind: "superseded", leaseId: leaseA.id } } });
    for (const retry of [["note", "sessions", "retrying"], ["renew", "sessions"], ["release", "sessions", "--evidence", "done?"]]) {
      const run = await cli("agent", retry, sessionA);
      expect(run.code).toBe(5);
      expect(run.stderr).toContain("work-graph claim sessions");
    }
    const neverClaimed = await cli("agent", ["note", "sessions", "hello"], fresh);
    expect(neverClaimed.code).toBe(5);
    expect(neverClaimed.stderr).toContain("claim it first (work-graph claim sessions)");

    // Nothing was written with B's lease; B itself works normally.
    const notes = await cli("operator", ["show", "sessions", "--json"]);
    expect(notes.code).toBe(0);
    const written = await database.connect().then((client) => client.query("SELECT count(*)::int AS n FROM notes WHERE work_item_id = 'sessions'"));
    expect(written.rows[0]).toEqual({ n: 0 });
    expect((await cli("agent", ["note", "sessions", "B's progress"], sessionB)).code).toBe(0);
  });

  it("maps every kind of refusal to its exit code", async () => {
    await cli("operator", ["create", "--title", "Blocker", "--id", "blocker", "--priority=-10"]);
    await cli("operator", ["create", "--title", "Waits", "--id", "waits", "--depends-on", "blocker", "--priority=-10"]);

    const notClaimable = await cli("agent", ["claim", "waits"]);
    expect(notClaimable.code).toBe(6);
    expect(notClaimable.stderr).toContain("NOT_CLAIMABLE");
    expect(notClaimable.stderr).toContain("The item is blocked.");
    const emptyParent = await cli("agent", ["claim", "--parent", "waits", "--json"]);
    expect(emptyParent).toMatchObject({ code: 6, stdout: "null\n" });

    expect((await cli("operator", ["show", "no-such-item"])).code).toBe(4);
    expect((await cli("operator", ["create", "--title", "Again", "--id", "blocker"])).code).toBe(7); // DUPLICATE
    expect((await cli("operator", ["depend", "blocker", "waits"])).code).toBe(7); // DEPENDENCY_CYCLE
    const invalid = await cli("agent", ["claim", "--duration", "0", "--json"]);
    expect(invalid.code).toBe(2);
    expect(JSON.parse(invalid.stderr)).toMatchObject({ error: { reason: "VALIDATION", code: "BAD_REQUEST" } });
    const usage = await cli("agent", ["release", "blocker"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--evidence is required");
    expect(usage.stderr).toContain("usage: work-graph release <item> --evidence E");
    expect((await cli("agent", ["frobnicate"])).code).toBe(2);
    const badToken = await cli(null, ["queue"], { WORK_GRAPH_TOKEN: "wga_wrong" });
    expect(badToken.code).toBe(3);
    expect(badToken.stderr).toContain("UNAUTHENTICATED");
    expect((await cli("agent", ["tokens", "list"])).code).toBe(3); // FORBIDDEN: admin only
    const unreachable = await cli("agent", ["queue"], { WORK_GRAPH_URL: "http://127.0.0.1:9" });
    expect(unreachable.code).toBe(8);
    // Flags override the environment.
    const overridden = await cli(null, ["queue", "--url", server.url, "--token", tokens.agent], { WORK_GRAPH_URL: "http://127.0.0.1:9" });
    expect(overridden.code).toBe(0);
  });

  it("manages tokens, prints help and the agent primer without a server", async () => {
    const created = await cli("admin", ["tokens", "create", "--role", "agent", "--worker-id", "new-agent", "--label", "cli test", "--json"]);
    const { id, token } = json<{ id: string; token: string }>(created);
    expect(token).toMatch(/^wga_/);
    const asNew = await cli(null, ["queue", "--json"], { WORK_GRAPH_TOKEN: token });
    expect(asNew.code).toBe(0);
    const listed = await cli("admin", ["tokens", "list"]);
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+agent\\s+new-agent\\s+cli test`));
    expect(listed.stdout).not.toContain(token);
    expect((await cli("admin", ["tokens", "revoke", id])).code).toBe(0);
    expect((await cli(null, ["queue"], { WORK_GRAPH_TOKEN: token })).code).toBe(3);

    const offline = { WORK_GRAPH_URL: "http://127.0.0.1:9" };
    const prime = await cli(null, ["prime"], offline);
    expect(prime.code).toBe(0);
    for (const step of ["work-graph claim", "work-graph note", "work-graph renew", "work-graph release", "work-graph attention request"]) {
      expect(prime.stdout).toContain(step);
    }
    expect(prime.stdout).toContain("Exit code 5");
    const help = await cli(null, ["help"], offline);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Exit codes:");
    expect(help.stdout).toContain("attention resolve <id> --resolution R");
  });

  it("takes only each command's own options: an unknown one exits 2 with the command's usage line; --help lists them", async () => {
    const offline = { WORK_GRAPH_URL: "http://127.0.0.1:9" };
    const unknown = await cli("agent", ["claim", "--evidence", "x"], offline);
    expect(unknown).toMatchObject({ code: 2, stdout: "" });
    expect(unknown.stderr).toBe("work-graph: unknown option '--evidence'\nusage: work-graph claim [<item>] [--parent P] [--duration S] [--wait S] [--key K]\n");
    // Against a live server with work ready, the command never runs: nothing is claimed.
    await cli("operator", ["create", "--title", "Not for a wrong flag", "--id", "flags"]);
    const sql = await database.connect();
    const leasesBefore = (await sql.query("SELECT count(*)::int AS n FROM leases")).rows[0];
    expect(await cli("agent", ["claim", "--evidence", "x", "--json"])).toMatchObject({ code: 2, stdout: "" });
    expect((await sql.query("SELECT count(*)::int AS n FROM leases")).rows[0]).toEqual(leasesBefore);

    const extra = await cli("agent", ["release", "a", "b", "--evidence", "done"], offline);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain("usage: work-graph release <item> --evidence E [--link URL]…");
    const missing = await cli("agent", ["renew"], offline);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'item'");

    const help = await cli(null, ["release", "--help"], offline);
    expect(help).toMatchObject({ code: 0, stderr: "" });
    expect(help.stdout).toContain("Usage: work-graph release <item> --evidence E [--link URL]…");
    for (const option of ["--evidence <E>", "--link <URL>", "--lease-id <ID>", "--epoch <N>", "--json"]) expect(help.stdout).toContain(option);
    expect(help.stdout).not.toContain("--wait");
    const viaHelp = await cli(null, ["help", "claim"], offline);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toContain("--wait <S>");
    const group = await cli(null, ["attention", "wait", "--help"], offline);
    expect(group.stdout).toContain("--timeout <S>");
  });
});
