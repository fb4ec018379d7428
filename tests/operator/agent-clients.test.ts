import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkGraphClient, runWorker, WorkGraphError, type WorkerEvent } from "../../packages/agent/src/sdk";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { gate } from "../sdk/support";

/* The SDK's runWorker and the CLI under operator control: revoked = fenced, drained = finish and stop. */

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "packages", "agent", "bin", "work-graph.js");

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
let stateDir: string;
beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer(database.instance);
  stateDir = await mkdtemp(path.join(os.tmpdir(), "work-graph-operator-cli-"));
});
afterAll(async () => {
  await server?.close();
  await database?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

async function agentSdk(workerId: string) {
  const { token } = await callerAs(database.instance, "agent", workerId);
  return createWorkGraphClient({ url: server.url, token });
}
const operatorApi = async () => (await callerAs(database.instance, "operator")).api;

describe("runWorker", () => {
  it("aborts the handler when an operator revokes its lease, and counts the item as lost", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "sdk-revoked", title: "Will be revoked", priority: 100 });
    const client = await agentSdk("sdk-revokee");
    const started = gate<string>();
    const events: WorkerEvent[] = [];
    let abortReason: unknown;
    const summary = runWorker({
      client, durationSeconds: 60, renewIntervalMs: 200, maxItems: 1, pollIntervalMs: 50, handleProcessSignals: false,
      onEvent: (event) => events.push(event),
      handler: async ({ lease, signal }) => {
        started.open(lease.id);
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        abortReason = signal.reason;
        return { evidence: "must not be sent" };
      },
    });
    const leaseId = await started.promise;
    await operator.leases.revoke({ leaseId, epoch: 1, reason: "wrong approach" });
    const result = await summary;
    expect(result).toMatchObject({ claimed: 1, lost: 1, released: 0 });
    expect(abortReason).toBeInstanceOf(WorkGraphError);
    expect((abortReason as WorkGraphError).leaseKind).toBe("revoked");
    expect((abortReason as WorkGraphError).detail.reason).toBe("wrong approach");
    expect(events.some((event) => event.type === "lost")).toBe(true);
    expect((await operator.leases.get({ leaseId })).outcome).toBe("revoked");
  });

  it("on WORKER_DRAINED it finishes the item in hand, claims nothing more and exits", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "sdk-drain-1", title: "In hand", priority: 200 });
    await operator.workItems.create({ id: "sdk-drain-2", title: "Never claimed", priority: 199 });
    const client = await agentSdk("sdk-drainee");
    const started = gate();
    const proceed = gate();
    const summary = runWorker({
      client, durationSeconds: 60, pollIntervalMs: 50, handleProcessSignals: false,
      handler: async ({ workItem }) => {
        started.open();
        await proceed.promise;
        return { evidence: `finished ${workItem.id}` };
      },
    });
    await started.promise;
    await operator.workers.drain({ workerId: "sdk-drainee", reason: "scaling down" });
    proceed.open();
    const result = await summary;
    expect(result).toMatchObject({ claimed: 1, released: 1, stoppedBy: "drained" });
    expect((await operator.workItems.get({ id: "sdk-drain-1" })).status).toBe("released");
    expect((await operator.workItems.get({ id: "sdk-drain-2" })).stage).toBe("ready");
  });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(token: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { NODE_ENV: "test", PATH: process.env.PATH, HOME: stateDir, WORK_GRAPH_URL: server.url, WORK_GRAPH_STATE: path.join(stateDir, "state.json"), WORK_GRAPH_TOKEN: token },
      timeout: 30_000,
    }, (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr }));
  });
}

describe("work-graph CLI", () => {
  it("revoke → the agent's next command exits 5 and says why; drain → its claim exits 9; workers lists it; undrain", async () => {
    const operatorToken = (await callerAs(database.instance, "operator")).token;
    const agentToken = (await callerAs(database.instance, "agent", "cli-op-agent")).token;
    expect((await cli(operatorToken, ["create", "--id", "cli-op-item", "--title", "CLI item"])).code).toBe(0);
    expect((await cli(agentToken, ["claim", "cli-op-item"])).code).toBe(0);

    const revoked = await cli(operatorToken, ["revoke", "cli-op-item", "--reason", "taking it back"]);
    expect(revoked).toMatchObject({ code: 0 });
    expect(revoked.stdout).toContain("Revoked cli-op-agent's lease on cli-op-item");
    const fenced = await cli(agentToken, ["renew", "cli-op-item"]);
    expect(fenced.code).toBe(5);
    expect(fenced.stderr).toContain("LEASE_NOT_CURRENT (revoked)");
    expect(fenced.stderr).toContain("taking it back");
    expect((await cli(operatorToken, ["revoke", "cli-op-item", "--reason", "again"])).code).toBe(5); // nothing live to revoke

    expect((await cli(operatorToken, ["drain", "cli-op-agent", "--reason", "end of shift"])).code).toBe(0);
    const refused = await cli(agentToken, ["claim"]);
    expect(refused.code).toBe(9);
    expect(refused.stderr).toContain("WORKER_DRAINED");
    const listed = await cli(operatorToken, ["workers", "--json"]);
    const workers = JSON.parse(listed.stdout) as { workerId: string; drained: boolean; drainReason: string | null; lastHour: { revoked: number } }[];
    expect(workers.find((worker) => worker.workerId === "cli-op-agent")).toMatchObject({ drained: true, drainReason: "end of shift", lastHour: { revoked: 1 } });
    expect((await cli(agentToken, ["drain", "cli-op-agent"])).code).toBe(3); // agents may not
    expect((await cli(operatorToken, ["undrain", "cli-op-agent"])).code).toBe(0);
    expect((await cli(agentToken, ["claim", "cli-op-item"])).code).toBe(0);
  });
});
