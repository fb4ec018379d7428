import { execFile } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";

const ROOT = path.resolve(import.meta.dirname, "../..");

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer(database.instance);
});
afterAll(async () => {
  await server?.close();
  await database?.close();
});

/** `npx tsx examples/worker.ts` as a child process, as in the walkthrough. */
function exampleWorker(token: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", "examples/worker.ts"], {
      cwd: ROOT,
      env: {
        NODE_ENV: "test", PATH: process.env.PATH, WORK_GRAPH_URL: server.url, WORK_GRAPH_TOKEN: token, WORK_SECONDS: "0.3", LEASE_SECONDS: "10", EXIT_WHEN_IDLE_SECONDS: "2",
      },
      timeout: 45_000,
    }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? -1) : 0, stdout, stderr }));
  });
}

describe("examples/worker.ts", () => {
  it("two example workers drain three items with a dependency, each item once, with a note per item", async () => {
    const operator = (await callerAs(database.instance, "operator")).api;
    await operator.workItems.create({ id: "design", title: "Design" });
    await operator.workItems.create({ id: "build", title: "Build", dependsOn: ["design"] });
    await operator.workItems.create({ id: "announce", title: "Announce" });
    const one = await callerAs(database.instance, "agent", "example-1");
    const two = await callerAs(database.instance, "agent", "example-2");

    const [first, second] = await Promise.all([exampleWorker(one.token), exampleWorker(two.token)]);
    expect(first.stderr).toBe("");
    expect(second.stderr).toBe("");
    expect([first.code, second.code]).toEqual([0, 0]);
    expect(first.stdout + second.stdout).toMatch(/stopped \(idle\)/);

    for (const id of ["design", "build", "announce"]) {
      const history = await operator.leases.history({ workItemId: id });
      expect(history.map((lease) => lease.outcome)).toEqual(["released"]);
      const notes = (await operator.notes.list({ workItemId: id })).items;
      expect(notes[0]!.content).toMatch(/^picked up by example-[12] \(epoch 1\)$/);
    }
    // "build" waited for "design": claimed only after design was released.
    const events = (await operator.events.list({ limit: 500 })).items;
    const designReleased = events.find((e) => e.workItemId === "design" && e.type === "lease.ended")!;
    const buildClaimed = events.find((e) => e.workItemId === "build" && e.type === "lease.claimed")!;
    expect(buildClaimed.sequence).toBeGreaterThan(designReleased.sequence);
  });
});
