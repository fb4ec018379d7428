import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";

/* `work-graph claim --wait <s>` and `work-graph attention wait <id>`: a shell agent that waits instead of polling. */

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "packages", "agent", "bin", "work-graph.js");

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
let stateDir: string;
let agentToken: string;
let operator: Awaited<ReturnType<typeof callerAs>>["api"];

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer(database.instance);
  stateDir = await mkdtemp(path.join(os.tmpdir(), "work-graph-cli-wait-"));
  agentToken = (await callerAs(database.instance, "agent", "shell-agent")).token;
  operator = (await callerAs(database.instance, "operator")).api;
});
afterAll(async () => {
  await server?.close();
  await database?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { NODE_ENV: "test", PATH: process.env.PATH, HOME: stateDir, WORK_GRAPH_URL: server.url, WORK_GRAPH_TOKEN: agentToken, WORK_GRAPH_STATE: path.join(stateDir, "state.json") },
      timeout: 60_000,
    }, (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr }));
  });
}

describe("work-graph CLI waiting", () => {
  it("claim --wait returns the item that becomes ready while it waits; exit 6 when the wait runs out", async () => {
    const quick = await cli(["claim", "--wait", "0.5"]);
    expect(quick.code).toBe(6);
    expect(quick.stdout).toMatch(/Nothing became ready to claim within/);
    await expect(cli(["claim", "--wait", "soon"])).resolves.toMatchObject({ code: 2 });

    const waiting = cli(["claim", "--wait", "45"]);
    await vi.waitFor(() => expect(database.instance.wakeups.waitingClaims, "the CLI's claim waits").toBe(1), { timeout: 30_000, interval: 10 });
    await operator.workItems.create({ id: "shell-task", title: "For the shell agent" });
    const claimed = await waiting;
    expect(claimed.code).toBe(0);
    expect(claimed.stdout).toMatch(/^Claimed shell-task/);
  }, 90_000);

  it("attention wait prints the answer once an operator resolves; exit 10 when still unanswered", async () => {
    const asked = await cli(["attention", "request", "shell-task", "--kind", "decision", "--question", "Ship it?", "--option", "yes", "--option", "no", "--json"]);
    expect(asked.code).toBe(0);
    const requestId = (JSON.parse(asked.stdout) as { request: { id: string } }).request.id;

    const unanswered = await cli(["attention", "wait", requestId, "--timeout", "1"]);
    expect(unanswered.code).toBe(10);
    expect(unanswered.stdout).toMatch(/Still unanswered after/);

    const waiting = cli(["attention", "wait", requestId, "--timeout", "45"]);
    await vi.waitFor(() => expect(database.instance.wakeups.waitingForAttention, "the CLI waits for the answer").toBe(1), { timeout: 30_000, interval: 10 });
    await operator.attention.resolve({ id: requestId, resolution: "yes" });
    const answered = await waiting;
    expect(answered.code).toBe(0);
    expect(answered.stdout).toMatch(/^Answered: yes/);
    expect(answered.stdout).toMatch(/work-graph claim shell-task/);
    const again = await cli(["claim", "shell-task", "--json"]);
    expect(JSON.parse(again.stdout)).toMatchObject({ attention: [{ id: requestId, resolution: "yes" }] });
  }, 90_000);
});
