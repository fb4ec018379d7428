import { describe, expect } from "vitest";
import { callerAs, startTestServer } from "../support/app";
import { claimAndRelease, claimNext, expectStages, expectUnchanged, graphTest, refused, type Api } from "../graph/support";

const it = graphTest({ poolSize: 12 });

/** Claims `id` (named) as `worker` and asks a blocking question; returns the lease and the request. */
async function ask(worker: Api, id: string, question = `What about ${id}?`) {
  const claimed = (await worker.leases.claim({ workItemId: id, durationSeconds: 600 }))!;
  const asked = await worker.attention.request({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, kind: "decision", question });
  return { claimed, ...asked };
}

describe("attention.request", () => {
  it("blocking: ends the lease as attention_requested in the same transaction; the item needs attention", async ({ actors, sql: client }) => {
    const { operator } = actors;
    const worker = await actors.agent("asker");
    await operator.workItems.create({ id: "a", title: "A", priority: 5 });
    await operator.workItems.create({ id: "b", title: "B" });
    const claimed = await claimNext(worker, "a");
    const { request, endedLease } = await worker.attention.request({
      leaseId: claimed.lease.id,
      epoch: 1,
      kind: "authority",
      question: "May I delete the old table?",
      context: "It has 3 rows",
      options: ["yes", "no"],
    });
    expect(request).toMatchObject({
      workItemId: "a", leaseId: claimed.lease.id, workerId: "asker", kind: "authority", question: "May I delete the old table?",
      context: "It has 3 rows", options: ["yes", "no"], blocking: true, status: "open", resolution: null, resolvedBy: null, resolvedAt: null,
    });
    expect(endedLease).toMatchObject({ id: claimed.lease.id, epoch: 1, outcome: "attention_requested" });
    expect(endedLease!.endedAt).not.toBeNull();
    expect(await worker.leases.get({ leaseId: claimed.lease.id })).toEqual(endedLease);
    const item = (await expectStages(actors, { a: "needs_attention", b: "ready" }, ["b"])).get("a")!;
    expect(item).toMatchObject({ currentLease: null, previousWorkerId: "asker" });

    // One transaction wrote the request, ended the lease and marked the item.
    const { rows } = await client.query(
      `SELECT (SELECT xmin::text FROM attention_requests WHERE id = $1::uuid) AS request, (SELECT xmin::text FROM leases WHERE id = $2::uuid) AS lease,
              (SELECT xmin::text FROM work_items WHERE id = 'a') AS item`,
      [request.id, claimed.lease.id],
    );
    expect(rows[0].request).toBe(rows[0].lease);
    expect(rows[0].item).toBe(rows[0].lease);
    const events = (await operator.events.list({ workItemId: "a" })).items;
    expect(events.slice(-2)).toMatchObject([
      { type: "attention.requested", leaseId: claimed.lease.id, epoch: 1, data: { requestId: request.id, blocking: true } },
      { type: "lease.ended", leaseId: claimed.lease.id, epoch: 1, data: { outcome: "attention_requested", requestId: request.id } },
    ]);

    // The ended lease is fenced off: no renewal, no second request.
    await expectUnchanged(client, () => worker.leases.renew({ leaseId: claimed.lease.id, epoch: 1 }), { reason: "LEASE_NOT_CURRENT", detail: { kind: "ended" } });
    await expectUnchanged(client, () => worker.attention.request({ leaseId: claimed.lease.id, epoch: 1, kind: "help", question: "Again?" }), {
      reason: "LEASE_NOT_CURRENT",
      detail: { kind: "ended" },
    });
  });

  it("non-blocking: the lease and readiness are untouched", async ({ actors }) => {
    const { operator } = actors;
    const worker = await actors.agent("fyi");
    await operator.workItems.create({ id: "n", title: "N", priority: 5 });
    await operator.workItems.create({ id: "m", title: "M" });
    const claimed = await claimNext(worker, "n");
    const { request, endedLease } = await worker.attention.request({ leaseId: claimed.lease.id, epoch: 1, kind: "review", question: "Have a look when you can", blocking: false });
    expect(endedLease).toBeNull();
    expect(request).toMatchObject({ blocking: false, status: "open", workItemId: "n" });
    const item = (await expectStages(actors, { n: "leased", m: "ready" }, ["m"])).get("n")!;
    expect(item.currentLease).toMatchObject({ id: claimed.lease.id, endedAt: null, outcome: null });
    await worker.leases.renew({ leaseId: claimed.lease.id, epoch: 1, durationSeconds: 600 });
    const released = await worker.leases.release({ leaseId: claimed.lease.id, epoch: 1, evidence: "done anyway" });
    expect(released.workItem.stage).toBe("released");
    expect((await operator.attention.list({ status: "open" })).items.map((r) => r.id)).toEqual([request.id]);
  });

  it("only one blocking request can be opened per lease, even when they race", async ({ actors }) => {
    const { operator } = actors;
    const worker = await actors.agent("racer");
    await operator.workItems.create({ id: "r", title: "R" });
    const claimed = await claimNext(worker, "r");
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => worker.attention.request({ leaseId: claimed.lease.id, epoch: 1, kind: "help", question: `Question ${i}` })),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    for (const result of results.filter((r) => r.status === "rejected")) {
      expect((result as PromiseRejectedResult).reason).toMatchObject({ cause: { reason: "LEASE_NOT_CURRENT", detail: { kind: "ended" } } });
    }
    const open = (await operator.attention.list({ status: "open" })).items;
    expect(open).toHaveLength(1);
    const resolved = await operator.attention.resolve({ id: open[0]!.id, resolution: "go ahead" });
    expect(resolved.workItem.stage).toBe("ready");
  });
});

describe("attention.resolve", () => {
  it("operators resolve once: ALREADY_RESOLVED after, FORBIDDEN for agents, NOT_FOUND for unknown ids", async ({ actors, sql: client }) => {
    const { operator } = actors;
    const worker = await actors.agent("w");
    await operator.workItems.create({ id: "q", title: "Q" });
    const { request } = await ask(worker, "q");
    await expectUnchanged(client, () => worker.attention.resolve({ id: request.id, resolution: "I answer myself" }), { reason: "FORBIDDEN" });
    await expectStages(actors, { q: "needs_attention" }, []);

    const resolved = await operator.attention.resolve({ id: request.id, resolution: "Do it" });
    expect(resolved.request).toMatchObject({ id: request.id, status: "resolved", resolution: "Do it" });
    expect(resolved.request.resolvedBy).toEqual(expect.any(String));
    expect(resolved.request.resolvedAt).not.toBeNull();
    expect(resolved.workItem).toMatchObject({ id: "q", stage: "ready" });
    await expectStages(actors, { q: "ready" }, ["q"]);

    await expectUnchanged(client, () => operator.attention.resolve({ id: request.id, resolution: "Actually, don't" }), { reason: "ALREADY_RESOLVED" });
    expect((await operator.attention.get({ id: request.id })).resolution).toBe("Do it");
    await expectUnchanged(client, () => operator.attention.resolve({ id: "00000000-0000-4000-8000-000000000000", resolution: "?" }), { reason: "NOT_FOUND" });
  });

  it("two blocking requests on an item need two resolutions", async ({ actors, sql: client }) => {
    const { operator } = actors;
    const worker = await actors.agent("w");
    await operator.workItems.create({ id: "two", title: "Two questions" });
    const { request, claimed } = await ask(worker, "two", "First question");
    // The API opens at most one blocking request per lease (the lease ends with it), so the
    // second one is written the way the request would be: same lease, counted on the item.
    const { rows } = await client.query(
      `WITH r AS (INSERT INTO attention_requests (work_item_id, lease_id, worker_id, kind, question, blocking)
                  VALUES ('two', $1::uuid, 'w', 'access', 'Second question', true) RETURNING id)
       , c AS (UPDATE work_items SET blocking_attention_count = blocking_attention_count + 1 WHERE id = 'two')
       SELECT id::text FROM r`,
      [claimed.lease.id],
    );
    const second = rows[0].id as string;
    const first = await operator.attention.resolve({ id: request.id, resolution: "one" });
    expect(first.workItem.stage).toBe("needs_attention");
    await expectStages(actors, { two: "needs_attention" }, []);
    const last = await operator.attention.resolve({ id: second, resolution: "two" });
    expect(last.workItem.stage).toBe("ready");
    await expectStages(actors, { two: "ready" }, ["two"]);
  });

  it("resolution recomputes readiness: blocked if a dependency appeared, waiting if a child did", async ({ actors }) => {
    const { operator } = actors;
    const worker = await actors.agent("w");
    await operator.workItems.create({ id: "paused", title: "Paused" });
    await operator.workItems.create({ id: "kids", title: "Gets a child" });
    await operator.workItems.create({ id: "new-blocker", title: "Appeared meanwhile", priority: 3 });
    const paused = await ask(worker, "paused");
    const kids = await ask(worker, "kids");
    await operator.workItems.addDependency({ workItemId: "paused", dependsOnId: "new-blocker" });
    await operator.workItems.create({ id: "kids.1", title: "Kid", parentId: "kids" });
    await expectStages(actors, { paused: "needs_attention", kids: "needs_attention", "kids.1": "ready", "new-blocker": "ready" });

    expect((await operator.attention.resolve({ id: paused.request.id, resolution: "ok" })).workItem.stage).toBe("blocked");
    expect((await operator.attention.resolve({ id: kids.request.id, resolution: "ok" })).workItem.stage).toBe("waiting_on_children");
    await expectStages(actors, { paused: "blocked", kids: "waiting_on_children", "kids.1": "ready", "new-blocker": "ready" }, ["new-blocker", "kids.1"]);
    await claimAndRelease(worker, "new-blocker");
    await claimAndRelease(worker, "kids.1");
    await expectStages(actors, { paused: "ready", kids: "ready" }, ["paused", "kids"]);
  });
});

describe("attention.list and attention.get", () => {
  it("lists oldest first with status and work item filters, paginates, and gets by id", async ({ actors }) => {
    const { operator } = actors;
    const w1 = await actors.agent("w1");
    const w2 = await actors.agent("w2");
    for (const id of ["i1", "i2", "i3"]) await operator.workItems.create({ id, title: id });
    const r1 = (await ask(w1, "i1", "one")).request;
    const i2 = (await w2.leases.claim({ workItemId: "i2" }))!;
    const r2 = (await w2.attention.request({ leaseId: i2.lease.id, epoch: 1, kind: "review", question: "two", blocking: false })).request;
    const r3 = (await ask(w1, "i3", "three")).request;
    const r4 = (await w2.attention.request({ leaseId: i2.lease.id, epoch: 1, kind: "scope", question: "four", blocking: false })).request;
    await operator.attention.resolve({ id: r1.id, resolution: "answered" });

    const ids = (page: { items: { id: string }[] }) => page.items.map((r) => r.id);
    expect(ids(await operator.attention.list({}))).toEqual([r1.id, r2.id, r3.id, r4.id]);
    expect(ids(await operator.attention.list({ status: "open" }))).toEqual([r2.id, r3.id, r4.id]);
    expect(ids(await w1.attention.list({ status: "resolved" }))).toEqual([r1.id]);
    expect(ids(await operator.attention.list({ workItemId: "i2" }))).toEqual([r2.id, r4.id]);
    expect(ids(await operator.attention.list({ workItemId: "i2", status: "open" }))).toEqual([r2.id, r4.id]);
    expect(ids(await operator.attention.list({ workItemId: "i1", status: "open" }))).toEqual([]);

    // Pagination: pages of 2, then of 1, cover every request once, in order.
    const first = await operator.attention.list({ limit: 2 });
    expect(ids(first)).toEqual([r1.id, r2.id]);
    expect(first.nextCursor).not.toBeNull();
    const second = await operator.attention.list({ limit: 2, cursor: first.nextCursor! });
    expect(ids(second)).toEqual([r3.id, r4.id]);
    expect(second.nextCursor).toBeNull();
    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await operator.attention.list({ status: "open", limit: 1, cursor });
      walked.push(...ids(page));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(walked).toEqual([r2.id, r3.id, r4.id]);

    const listed = (await operator.attention.list({})).items.find((r) => r.id === r3.id);
    expect(await w2.attention.get({ id: r3.id })).toEqual(listed);
    expect(await operator.attention.get({ id: r1.id })).toMatchObject({ status: "resolved", resolution: "answered", question: "one" });
    expect(await refused(operator.attention.get({ id: "00000000-0000-4000-8000-000000000000" }))).toMatchObject({ reason: "NOT_FOUND" });
    // (In-process the schema refusal is a BAD_REQUEST; over HTTP its error.data.reason is VALIDATION.)
    expect(await refused(operator.attention.get({ id: "not-a-uuid" }))).toMatchObject({ code: "BAD_REQUEST" });
  });
});

describe("resuming after attention", () => {
  it("the resuming claim carries the questions and answers of the previous lease", async ({ actors }) => {
    const { operator } = actors;
    const worker = await actors.agent("resumer");
    await operator.workItems.create({ id: "job", title: "Job" });
    const claimed = await claimNext(worker, "job");
    const fyi = await worker.attention.request({ leaseId: claimed.lease.id, epoch: 1, kind: "review", question: "FYI: touching the schema", blocking: false });
    const blocking = await worker.attention.request({ leaseId: claimed.lease.id, epoch: 1, kind: "decision", question: "Option A or B?", options: ["A", "B"] });
    await operator.attention.resolve({ id: blocking.request.id, resolution: "B, and keep A's tests" });

    const resumed = await claimNext(worker, "job");
    expect(resumed.lease.epoch).toBe(2);
    expect(resumed.attention.map((r) => [r.id, r.question, r.status, r.resolution])).toEqual([
      [fyi.request.id, "FYI: touching the schema", "open", null],
      [blocking.request.id, "Option A or B?", "resolved", "B, and keep A's tests"],
    ]);
    expect(resumed.attention[1]).toMatchObject({ options: ["A", "B"], blocking: true, leaseId: claimed.lease.id });

    // A claim with no attention behind it carries an empty list.
    await operator.workItems.create({ id: "plain", title: "Plain" });
    expect((await claimNext(worker, "plain")).attention).toEqual([]);
  });

  it("over HTTP, another worker's named claim returns the attention field as plain JSON", async ({ actors, database }) => {
    const { operator } = actors;
    const first = await actors.agent("first");
    await operator.workItems.create({ id: "handover", title: "Handover" });
    const { request } = await ask(first, "handover", "Which credentials?");
    await operator.attention.resolve({ id: request.id, resolution: "Use the staging ones" });

    const server = await startTestServer(database.instance);
    try {
      const { token } = await callerAs(database.instance, "agent", "second");
      const response = await fetch(`${server.url}/api/trpc/leases.claim`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ workItemId: "handover", durationSeconds: 60 }),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { result: { data: { lease: { epoch: number; workerId: string }; attention: unknown[] } } };
      expect(body.result.data.lease).toMatchObject({ epoch: 2, workerId: "second" });
      expect(body.result.data.attention).toMatchObject([{ id: request.id, question: "Which credentials?", resolution: "Use the staging ones", status: "resolved" }]);
    } finally {
      await server.close();
    }
  });
});
