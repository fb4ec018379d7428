import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkGraphClient, runWorker, type WorkGraphClient } from "../../packages/agent/src/sdk";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { advanceClockPast } from "../support/fixtures";
import { recordingFetch, type RecordedRequest } from "./support";

/*
 * The SDK speaks the queue policy (issue 24 items 5 and 6): runWorker claims with its project and
 * capabilities on every claim, and every hand-back is `leases.handBack` (outcome `returned`, rule
 * 16), falling back to the old 1 s lease only on a server that does not know it.
 */

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
let admin: Awaited<ReturnType<typeof callerAs>>["api"];
let operator: Awaited<ReturnType<typeof callerAs>>["api"];
beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer(database.instance);
  admin = (await callerAs(database.instance, "admin")).api;
  operator = (await callerAs(database.instance, "operator")).api;
});
afterAll(async () => {
  await server?.close();
  await database?.close();
});

/** An SDK client for a new agent token of `workerId` with `capabilities`, recording its requests. */
async function agentClient(workerId: string, capabilities: string[] = [], log: RecordedRequest[] = [], fetch = recordingFetch(log)) {
  const { token } = await admin.tokens.create({ role: "agent", workerId, capabilities });
  return { log, client: createWorkGraphClient({ url: server.url, token, fetch }) };
}

const runOnce = (client: WorkGraphClient, handler: Parameters<typeof runWorker>[0]["handler"], extra: Partial<Parameters<typeof runWorker>[0]> = {}) =>
  runWorker({ client, durationSeconds: 30, maxItems: 1, waitSeconds: 0, stopWhenIdleMs: 300, handleProcessSignals: false, handler, ...extra });

describe("runWorker routes by capability and project", () => {
  it("sends its projectId and capabilities on every claim, and takes only items those capabilities cover", async () => {
    await operator.workItems.create({ id: "route-gpu", title: "Needs a GPU", requires: ["gpu"], priority: 9_000 });
    await operator.workItems.create({ id: "route-browser", title: "Needs a browser", requires: ["browser"], priority: 8_000 });
    await operator.workItems.create({ id: "route-plain", title: "Needs nothing", priority: 7_000 });
    const { client, log } = await agentClient("router", ["browser", "gpu"]);
    const done: string[] = [];
    const summary = await runWorker({
      client, projectId: "default", capabilities: ["browser"], durationSeconds: 30, maxItems: 2, waitSeconds: 0, handleProcessSignals: false,
      handler: ({ workItem }) => {
        done.push(workItem.id);
        return { evidence: `did ${workItem.id}` };
      },
    });
    expect(summary).toMatchObject({ claimed: 2, released: 2 });
    const claims = log.filter((request) => request.path === "leases.claim");
    expect(claims.length).toBeGreaterThanOrEqual(2);
    for (const claim of claims) expect(claim.input).toMatchObject({ projectId: "default", capabilities: ["browser"] });
    // The GPU item is first in priority order, but this worker's claims never take it.
    expect(done).toEqual(["route-browser", "route-plain"]);
    expect((await operator.workItems.get({ id: "route-gpu" })).stage).toBe("ready");
  });
});

describe("runWorker hands items back with leases.handBack", () => {
  it("returning nothing hands the item back at once (outcome returned), three times in a row without going to a person", async () => {
    await operator.workItems.create({ id: "given-back", title: "Nobody wants it", priority: 9_500 });
    for (let round = 1; round <= 3; round++) {
      const { client } = await agentClient(`quitter-${round}`);
      const summary = await runOnce(client, () => undefined);
      expect(summary).toMatchObject({ claimed: 1, abandoned: 1 });
    }
    const history = await operator.leases.history({ workItemId: "given-back" });
    expect(history.map((lease) => lease.outcome)).toEqual(["returned", "returned", "returned"]);
    // Ended now, not shortened: the lease's end is its hand-back, well before its 30 s expiry.
    for (const lease of history) expect(Date.parse(lease.endedAt!)).toBeLessThan(Date.parse(lease.expiresAt));
    const events = (await operator.events.list({ workItemId: "given-back", limit: 100 })).items.filter((event) => event.type === "lease.ended");
    expect(events[0]!.data).toMatchObject({ reason: "the worker returned the item unfinished" });
    // Rule 16: returned is not an expiry, so rule 11 opened no request after three of them.
    expect((await operator.attention.list({ workItemId: "given-back" })).items).toEqual([]);
    const item = await operator.workItems.get({ id: "given-back" });
    expect(item).toMatchObject({ stage: "ready", currentLease: null });
  });

  it("a handler's { handBack, retryAfterSeconds } is the reason and the time gate: the item is scheduled until then", async () => {
    await operator.workItems.create({ id: "rate-limited", title: "Calls a rate-limited API", priority: 9_600 });
    const { client } = await agentClient("limited");
    const summary = await runOnce(client, () => ({ handBack: "the API answered 429", retryAfterSeconds: 600 }));
    expect(summary).toMatchObject({ claimed: 1, abandoned: 1 });
    const [lease] = await operator.leases.history({ workItemId: "rate-limited" });
    expect(lease!.outcome).toBe("returned");
    const ended = (await operator.events.list({ workItemId: "rate-limited", limit: 100 })).items.find((event) => event.type === "lease.ended");
    expect(ended!.data).toMatchObject({ reason: "the API answered 429", retryAfterSeconds: 600 });
    const item = await operator.workItems.get({ id: "rate-limited" });
    expect(item.stage).toBe("scheduled");
    const gate = Date.parse(item.notBefore!) - Date.parse(lease!.endedAt!);
    expect(gate).toBe(600_000);
  });

  it("on a server without leases.handBack (before v3), the hand-back falls back to a lease shortened to 1 s", async () => {
    await operator.workItems.create({ id: "old-server", title: "Handed back to an older server", priority: 9_700 });
    const log: RecordedRequest[] = [];
    // The real server, asked for a procedure it does not have: exactly what a v2 server answers to leases.handBack.
    const recorded = recordingFetch(log);
    const olderServer: typeof fetch = (input, init) =>
      recorded(String(input instanceof Request ? input.url : input).replace("/leases.handBack", "/leases.handBackUnknownHere"), init);
    const { client } = await agentClient("on-old-server", [], log, olderServer);
    const summary = await runOnce(client, () => undefined);
    expect(summary).toMatchObject({ abandoned: 1, failed: 0 });
    expect(log.map((request) => [request.path, request.reason])).toEqual(expect.arrayContaining([
      ["leases.handBackUnknownHere", "NOT_FOUND"],
      ["leases.renew", undefined],
    ]));
    const [lease] = await operator.leases.history({ workItemId: "old-server" });
    const heldFor = Date.parse(lease!.expiresAt) - Date.parse(lease!.renewedAt!);
    expect(heldFor).toBeGreaterThanOrEqual(999);
    expect(heldFor).toBeLessThanOrEqual(1001);
    await advanceClockPast(await database.connect(), lease!.expiresAt);
    const other = await agentClient("after-old-server");
    expect((await other.client.leases.claim.mutate({ workItemId: "old-server", durationSeconds: 30 }))?.workItem.id).toBe("old-server");
  });
});
