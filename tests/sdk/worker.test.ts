import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkGraphClient, runWorker, WorkGraphError, type WorkerEvent } from "../../packages/agent/src/sdk";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { advanceClockPast } from "../support/fixtures";
import { delay, gate, recordingFetch, type RecordedRequest } from "./support";

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

/** An SDK client for a fresh agent token of `workerId`, recording its requests. */
async function agentClient(workerId: string, log: RecordedRequest[] = [], hooks: Parameters<typeof recordingFetch>[1] = {}) {
  const { token } = await callerAs(database.instance, "agent", workerId);
  return { token, log, client: createWorkGraphClient({ url: server.url, token, fetch: recordingFetch(log, hooks) }) };
}

async function operatorApi() {
  return (await callerAs(database.instance, "operator")).api;
}

/** Every event of an item, read straight from the database's log. */
async function eventsOf(itemId: string) {
  const operator = await operatorApi();
  return (await operator.events.list({ workItemId: itemId, limit: 500 })).items;
}

describe("runWorker heartbeats", () => {
  it("keeps a 2 s lease alive through a 6 s handler, then releases with the handler's evidence", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "long-task", title: "Takes six seconds" });
    const { client } = await agentClient("hb-worker");
    const rival = await agentClient("hb-rival");
    const rivalClaims: unknown[] = [];
    const events: WorkerEvent[] = [];

    const summary = await runWorker({
      client,
      durationSeconds: 2,
      maxItems: 1,
      pollIntervalMs: 50,
      handleProcessSignals: false,
      onEvent: (event) => events.push(event),
      handler: async ({ workItem, signal }) => {
        expect(workItem.id).toBe("long-task");
        for (let second = 1; second <= 6; second++) {
          await delay(1000);
          // Well past the 2 s of the first lease, nobody else can take the item.
          if (second === 3 || second === 5) rivalClaims.push(await rival.client.leases.claim.mutate({ durationSeconds: 5 }));
        }
        expect(signal.aborted).toBe(false);
        return { evidence: "done after 6 s", links: ["https://example.test/run/1"] };
      },
    });

    expect(summary).toMatchObject({ claimed: 1, released: 1, lost: 0, failed: 0, stoppedBy: "maxItems" });
    expect(rivalClaims).toEqual([null, null]);
    const history = await operator.leases.history({ workItemId: "long-task" });
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ workerId: "hb-worker", epoch: 1, outcome: "released" });
    expect(history[0]!.renewedAt).not.toBeNull();
    expect((await operator.workItems.get({ id: "long-task" })).status).toBe("released");

    // The database's own log: each renewal happened before the previous expiry, so the lease never lapsed.
    const log = await eventsOf("long-task");
    const leaseEvents = log.filter((event) => event.type === "lease.claimed" || event.type === "lease.renewed");
    expect(leaseEvents.filter((event) => event.type === "lease.renewed").length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < leaseEvents.length; i++) {
      const previousExpiry = Date.parse(String(leaseEvents[i - 1]!.data.expiresAt));
      expect(Date.parse(leaseEvents[i]!.createdAt)).toBeLessThan(previousExpiry);
    }
    const lastExpiry = Date.parse(String(leaseEvents.at(-1)!.data.expiresAt));
    const ended = log.find((event) => event.type === "lease.ended")!;
    expect(Date.parse(ended.createdAt)).toBeLessThan(lastExpiry);
    expect(events.filter((event) => event.type === "renewed").length).toBe(leaseEvents.length - 1);
  });
});

describe("runWorker fencing", () => {
  it("aborts the handler when the item is taken over, and never writes with the old lease again", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "contested", title: "Contested item" });

    // Worker A's renewals are held back (a slow network) until worker B has taken the item over.
    const takenOver = gate();
    const a = await agentClient("fence-a", [], {
      before: async (request) => {
        if (request.path === "leases.renew") await takenOver.promise;
      },
    });
    const sameWorker = await agentClient("fence-a"); // a second token of worker A, to shorten its lease
    const b = await agentClient("fence-b");

    const started = gate<string>();
    let abortReason: unknown;
    let lateNote: unknown;
    const run = runWorker({
      client: a.client,
      durationSeconds: 6, // renews every 2 s; its local expiry watchdog would only fire after 6 s
      maxItems: 1,
      pollIntervalMs: 50,
      handleProcessSignals: false,
      handler: async ({ lease, signal, note }) => {
        await note("starting");
        started.open(lease.id);
        await new Promise<void>((resolve, reject) => {
          signal.addEventListener("abort", () => resolve(), { once: true });
          setTimeout(() => reject(new Error("the handler's signal never aborted")), 20_000);
        });
        abortReason = signal.reason;
        // A misbehaving handler keeps going: the SDK must refuse locally, sending nothing.
        lateNote = await note("after the takeover").catch((error: unknown) => error);
        return { evidence: "finished anyway" };
      },
    });

    const oldLeaseId = await started.promise;
    const shortened = await sameWorker.client.leases.renew.mutate({ leaseId: oldLeaseId, epoch: 1, durationSeconds: 1 });
    await advanceClockPast(await database.connect(), shortened.expiresAt);
    const takeover = await b.client.leases.claim.mutate({ workItemId: "contested", durationSeconds: 60 });
    expect(takeover?.lease.epoch).toBe(2);
    takenOver.open();

    const summary = await run;
    expect(summary).toMatchObject({ claimed: 1, lost: 1, released: 0 });
    expect(abortReason).toBeInstanceOf(WorkGraphError);
    expect(abortReason).toMatchObject({ reason: "LEASE_NOT_CURRENT", code: "CONFLICT", detail: { kind: "superseded" } });
    expect(lateNote).toBeInstanceOf(WorkGraphError);
    expect(lateNote).toMatchObject({ reason: "LEASE_NOT_CURRENT", detail: { local: true } });

    // At the HTTP layer: after the refused renewal, no request carried the old lease.
    const withOldLease = a.log.filter((request) => request.input?.leaseId === oldLeaseId);
    expect(withOldLease.map((request) => request.path)).toEqual([
      "leases.note",
      ...withOldLease.slice(1).map(() => "leases.renew"),
    ]);
    expect(withOldLease.at(-1)).toMatchObject({ path: "leases.renew", reason: "LEASE_NOT_CURRENT" });
    expect(withOldLease.filter((request) => request.reason === "LEASE_NOT_CURRENT")).toHaveLength(1);
    expect(a.log.some((request) => request.path === "leases.release")).toBe(false);

    // In the database's log: nothing with the old lease after the takeover; B's lease is untouched.
    const log = await eventsOf("contested");
    const takeoverEvent = log.find((event) => event.type === "lease.claimed" && event.epoch === 2)!;
    expect(log.filter((event) => event.sequence > takeoverEvent.sequence && event.leaseId === oldLeaseId)).toEqual([]);
    const history = await operator.leases.history({ workItemId: "contested" });
    expect(history.map((lease) => [lease.workerId, lease.epoch, lease.outcome])).toEqual([
      ["fence-a", 1, "expired"],
      ["fence-b", 2, null],
    ]);
    const item = await operator.workItems.get({ id: "contested" });
    expect(item).toMatchObject({ stage: "leased", status: "open", currentLease: { id: takeover!.lease.id } });
    expect((await operator.notes.list({ workItemId: "contested" })).items.map((n) => n.content)).toEqual(["starting"]);
  });
});

describe("runWorker idempotent claim", () => {
  it("retries a claim whose response was lost with the same key: same lease, one item taken", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "lost-answer-1", title: "First in line", priority: 1_000 });
    await operator.workItems.create({ id: "lost-answer-2", title: "Second in line", priority: 999 });
    let dropped = false;
    const { client, log } = await agentClient("retry-worker", [], {
      dropResponse: (request) => {
        if (request.path !== "leases.claim" || dropped) return false;
        dropped = true;
        return true;
      },
    });
    const handled: string[] = [];
    const events: WorkerEvent[] = [];
    const summary = await runWorker({
      client,
      durationSeconds: 30,
      maxItems: 1,
      handleProcessSignals: false,
      retry: { baseDelayMs: 10 },
      onEvent: (event) => events.push(event),
      handler: ({ workItem }) => {
        handled.push(workItem.id);
        return { evidence: "ok" };
      },
    });

    expect(summary).toMatchObject({ claimed: 1, released: 1 });
    expect(handled).toEqual(["lost-answer-1"]);
    const claims = log.filter((request) => request.path === "leases.claim");
    expect(claims).toHaveLength(2);
    expect(claims[0]!.status).toBe(200); // the server did claim; only the answer was lost
    expect(claims[1]!.input?.idempotencyKey).toBe(claims[0]!.input?.idempotencyKey);
    expect(events.find((event) => event.type === "claimed")).toMatchObject({ attempts: 2 });

    expect((await operator.leases.history({ workItemId: "lost-answer-1" })).map((lease) => lease.outcome)).toEqual(["released"]);
    expect(await operator.leases.history({ workItemId: "lost-answer-2" })).toEqual([]);
    expect((await operator.workItems.get({ id: "lost-answer-2" })).stage).toBe("ready");
    const claimEvents = [...(await eventsOf("lost-answer-1")), ...(await eventsOf("lost-answer-2"))].filter((e) => e.type === "lease.claimed");
    expect(claimEvents).toHaveLength(1);
  });

  it("the same key replays the same lease through the raw client too", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "replayed", title: "Replayed", priority: 2_000 });
    const { client } = await agentClient("replay-worker");
    const first = await client.leases.claim.mutate({ durationSeconds: 30, idempotencyKey: "claim-attempt-1" });
    const again = await client.leases.claim.mutate({ durationSeconds: 30, idempotencyKey: "claim-attempt-1" });
    expect(again?.lease.id).toBe(first?.lease.id);
    expect((await operator.leases.history({ workItemId: "replayed" })).length).toBe(1);
    await client.leases.release.mutate({ leaseId: first!.lease.id, epoch: first!.lease.epoch, evidence: "done" });
  });
});

describe("runWorker shutdown, errors and handler results", () => {
  it("on shutdown with 'finish' stops claiming but lets the current item finish", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "finish-1", title: "Finish me", priority: 3_000 });
    await operator.workItems.create({ id: "finish-2", title: "Never claimed", priority: 2_999 });
    const { client } = await agentClient("finish-worker");
    const stop = new AbortController();
    let handlerSignalAborted: boolean | undefined;
    const summary = await runWorker({
      client,
      durationSeconds: 30,
      signal: stop.signal,
      handleProcessSignals: false,
      handler: async ({ signal }) => {
        stop.abort();
        await delay(200);
        handlerSignalAborted = signal.aborted;
        return { evidence: "finished during shutdown" };
      },
    });
    expect(summary).toMatchObject({ claimed: 1, released: 1, stoppedBy: "signal" });
    expect(handlerSignalAborted).toBe(false);
    expect((await operator.workItems.get({ id: "finish-1" })).status).toBe("released");
    expect((await operator.workItems.get({ id: "finish-2" })).stage).toBe("ready");
  });

  it("on shutdown with 'cancel' aborts the handler and cancels the item", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "cancel-me", title: "Cancel me", priority: 4_000 });
    const { client } = await agentClient("cancel-worker");
    const stop = new AbortController();
    const summary = await runWorker({
      client,
      durationSeconds: 30,
      signal: stop.signal,
      onShutdown: "cancel",
      handleProcessSignals: false,
      handler: async ({ signal }) => {
        setTimeout(() => stop.abort(), 50);
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        return undefined;
      },
    });
    expect(summary).toMatchObject({ claimed: 1, cancelled: 1 });
    const history = await operator.leases.history({ workItemId: "cancel-me" });
    expect(history.map((lease) => lease.outcome)).toEqual(["cancelled"]);
    expect((await operator.workItems.get({ id: "cancel-me" })).status).toBe("cancelled");
  });

  it("a throwing handler raises a blocking help request; a handler's own attention request ends the lease", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "crashes", title: "Crashes", priority: 5_000 });
    await operator.workItems.create({ id: "asks", title: "Asks", priority: 4_999 });
    const { client } = await agentClient("asking-worker");
    const summary = await runWorker({
      client,
      durationSeconds: 30,
      maxItems: 2,
      handleProcessSignals: false,
      handler: async ({ workItem, requestAttention, note }) => {
        if (workItem.id === "crashes") throw new Error("disk full");
        await requestAttention({ kind: "decision", question: "Which way?", options: ["left", "right"] });
        // The lease has ended: a later write is refused without reaching the server.
        await expect(note("too late")).rejects.toMatchObject({ reason: "LEASE_NOT_CURRENT", detail: { local: true } });
      },
    });
    expect(summary).toMatchObject({ claimed: 2, attentionRequested: 2, handlerErrors: 1 });
    const open = (await operator.attention.list({ status: "open" })).items;
    expect(open.find((request) => request.workItemId === "crashes")).toMatchObject({ kind: "help", blocking: true });
    expect(open.find((request) => request.workItemId === "crashes")!.question).toContain("disk full");
    expect(open.find((request) => request.workItemId === "asks")).toMatchObject({ kind: "decision", options: ["left", "right"] });
    expect((await operator.workItems.get({ id: "asks" })).stage).toBe("needs_attention");
  });

  it("decompose with claimChildId hands the child straight to the handler", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "big", title: "Big", priority: 6_000 });
    const { client } = await agentClient("decomposer");
    const seen: string[] = [];
    const summary = await runWorker({
      client,
      durationSeconds: 30,
      maxItems: 1,
      handleProcessSignals: false,
      handler: async ({ workItem, lease, decompose }) => {
        seen.push(`${workItem.id}@${lease.epoch}`);
        if (workItem.id === "big") {
          await decompose({ children: [{ id: "big.a", title: "Part A" }, { id: "big.b", title: "Part B", dependsOn: ["big.a"] }], claimChildId: "big.a" });
          return;
        }
        return { evidence: `did ${workItem.id}` };
      },
    });
    expect(seen).toEqual(["big@1", "big.a@1"]);
    expect(summary).toMatchObject({ decomposed: 1, released: 1 });
    expect((await operator.workItems.get({ id: "big.a" })).status).toBe("released");
    expect((await operator.workItems.get({ id: "big.b" })).stage).toBe("ready");
  });

  it("returning nothing hands the item back (leases.handBack, outcome returned): it is claimable again at once", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "handed-back", title: "Handed back", priority: 7_000 });
    const { client } = await agentClient("quitter");
    const summary = await runWorker({ client, durationSeconds: 30, maxItems: 1, handleProcessSignals: false, handler: () => undefined });
    expect(summary).toMatchObject({ abandoned: 1 });
    const [lease] = await operator.leases.history({ workItemId: "handed-back" });
    expect(lease).toMatchObject({ outcome: "returned" });
    const other = await agentClient("taker");
    expect((await other.client.leases.claim.mutate({ durationSeconds: 30 }))?.workItem.id).toBe("handed-back");
  });

  it("with waitSeconds: 0, an empty queue backs off with jitter and stopWhenIdleMs ends the run", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "childless", title: "No children to claim" });
    const { client, log } = await agentClient("idle-worker");
    const events: WorkerEvent[] = [];
    const summary = await runWorker({
      client, parentId: "childless", waitSeconds: 0, pollIntervalMs: 40, stopWhenIdleMs: 600, handleProcessSignals: false, handler: () => undefined, onEvent: (event) => events.push(event),
    });
    expect(summary).toMatchObject({ claimed: 0, stoppedBy: "idle" });
    const delays = events.flatMap((event) => (event.type === "idle" ? [event.delayMs] : []));
    expect(delays.length).toBeGreaterThanOrEqual(2);
    // Exponential: each wait is drawn from [step/2, step] with step doubling from 40 ms.
    delays.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(40 * 2 ** i * 0.5);
      expect(ms).toBeLessThanOrEqual(40 * 2 ** i);
    });
    expect(log.filter((request) => request.path === "leases.claim").length).toBe(delays.length + 1);
  });
});

describe("WorkGraphError", () => {
  it("carries reason, detail and code for API refusals, and NETWORK when nothing answers", async () => {
    const { client } = await agentClient("error-worker");
    const fenced = await client.leases.renew.mutate({ leaseId: "00000000-0000-4000-8000-000000000000", epoch: 1 }).catch((e: unknown) => e);
    expect(fenced).toBeInstanceOf(WorkGraphError);
    expect(fenced).toMatchObject({ reason: "LEASE_NOT_CURRENT", code: "CONFLICT", httpStatus: 409, detail: { kind: "unknown" } });
    expect((fenced as WorkGraphError).fenced).toBe(true);
    expect((fenced as WorkGraphError).leaseKind).toBe("unknown");

    const invalid = await client.leases.claim.mutate({ durationSeconds: 0 }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ reason: "VALIDATION", code: "BAD_REQUEST" });

    const anonymous = createWorkGraphClient({ url: server.url, token: "wga_not-a-real-token" });
    await expect(anonymous.workItems.queue.query({})).rejects.toMatchObject({ reason: "UNAUTHENTICATED", code: "UNAUTHORIZED" });
    expect(await anonymous.health.check.query()).toMatchObject({ ok: true, database: "ok" });

    const operator = await callerAs(database.instance, "operator");
    const asOperator = createWorkGraphClient({ url: `${server.url}/api/trpc/`, token: operator.token });
    await expect(asOperator.leases.claim.mutate({})).rejects.toMatchObject({ reason: "FORBIDDEN" });
    await expect(asOperator.workItems.get.query({ id: "no-such-item" })).rejects.toMatchObject({ reason: "NOT_FOUND", detail: { id: "no-such-item" } });

    const nowhere = createWorkGraphClient({ url: "http://127.0.0.1:9", token: "x", timeoutMs: 2000 });
    const network = await nowhere.workItems.queue.query({}).catch((e: unknown) => e);
    expect(network).toMatchObject({ reason: "NETWORK", code: "NETWORK", retryable: true });
  });

  it("an idle worker waits on the server instead of polling: one claim request, the new item claimed within 1 s", async () => {
    const operator = await operatorApi();
    await operator.workItems.create({ id: "wait-parent", title: "Children arrive later" });
    const { client, log } = await agentClient("waiting-worker");
    const hub = database.instance.wakeups;
    let claimedAt = 0;
    const run = runWorker({
      client, parentId: "wait-parent", maxItems: 1, handleProcessSignals: false,
      handler: () => ({ evidence: "done" }),
      onEvent: (event) => {
        if (event.type === "claimed") claimedAt = performance.now();
      },
    });
    const deadline = Date.now() + 20_000;
    while (hub.waitingClaims === 0 && Date.now() < deadline) await delay(10);
    expect(hub.waitingClaims).toBe(1);
    await operator.workItems.create({ id: "late-child", title: "Late", parentId: "wait-parent" });
    const createdAt = performance.now();
    expect(await run).toMatchObject({ claimed: 1, released: 1, stoppedBy: "maxItems" });
    expect(claimedAt - createdAt).toBeLessThan(1_000);
    expect(log.filter((request) => request.path === "leases.claim")).toHaveLength(1);
  });

  it("stopping aborts a waiting claim at once; stopWhenIdleMs bounds the wait", async () => {
    const { client } = await agentClient("stopping-waiter");
    const hub = database.instance.wakeups;
    const stop = new AbortController();
    const waitingBefore = hub.waitingClaims;
    const run = runWorker({ client, parentId: "wait-parent", handleProcessSignals: false, signal: stop.signal, handler: () => undefined });
    const deadline = Date.now() + 20_000;
    while (hub.waitingClaims === waitingBefore && Date.now() < deadline) await delay(10);
    const stoppedAt = performance.now();
    stop.abort();
    expect(await run).toMatchObject({ claimed: 0, stoppedBy: "signal" });
    expect(performance.now() - stoppedAt).toBeLessThan(2_000);
    while (hub.waitingClaims !== waitingBefore && Date.now() < deadline) await delay(10);
    expect(hub.waitingClaims).toBe(waitingBefore); // the server dropped the waiter when the request went away

    const idleStart = performance.now();
    expect(await runWorker({ client, parentId: "wait-parent", stopWhenIdleMs: 700, handleProcessSignals: false, handler: () => undefined }))
      .toMatchObject({ stoppedBy: "idle" });
    expect(performance.now() - idleStart).toBeLessThan(5_000);
  });
});
