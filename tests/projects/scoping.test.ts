import { describe, expect } from "vitest";
import type { Lease } from "@work-graph/contract";
import { databaseTest, refusal } from "../support/fixtures";
import { openSse } from "../support/sse";
import { scopedCaller } from "./support";

/*
 * Rule 12 (projects scope tokens): a token scoped to "alpha" sees and touches only alpha's
 * items. A beta item, its leases, notes, attention requests and events are as invisible as a
 * missing id: the same NOT_FOUND (message and detail), empty pages, zero counts.
 */

const it = databaseTest();
type Api = Awaited<ReturnType<typeof scopedCaller>>;

let alphaOperator: Api;
let betaLease: Lease;
let betaRequestId: string;

describe("rule 12", () => {

  it("setup: alpha and beta items, a live beta lease with a note and an open request", async ({ database, people }) => {
    await people.admin.projects.create({ id: "alpha", name: "Alpha" });
    await people.admin.projects.create({ id: "beta", name: "Beta" });
    await people.operator.workItems.create({ id: "a1", title: "Alpha one", projectId: "alpha" });
    await people.operator.workItems.create({ id: "a2", title: "Alpha two", projectId: "alpha" });
    await people.operator.workItems.create({ id: "b1", title: "Beta one", projectId: "beta" });
    await people.operator.workItems.create({ id: "b2", title: "Beta two", projectId: "beta" });
    await people.operator.workItems.create({ id: "b3", title: "Beta three", projectId: "beta" });
    // Unscoped callers may link projects.
    await people.operator.workItems.addDependency({ workItemId: "a2", dependsOnId: "b2" });
    const worker = await people.agent("w-beta");
    betaLease = (await worker.leases.claim({ workItemId: "b1", durationSeconds: 600 }))!.lease;
    await worker.leases.note({ leaseId: betaLease.id, epoch: betaLease.epoch, content: "beta secret" });
    const asked = (await worker.leases.claim({ workItemId: "b3", durationSeconds: 600 }))!.lease;
    betaRequestId = (await worker.attention.request({ leaseId: asked.id, epoch: asked.epoch, kind: "decision", question: "Beta?" })).request.id;
    alphaOperator = await scopedCaller(database.db, people, { role: "operator", projects: ["alpha"] });
  });

  it("a named beta item is NOT_FOUND exactly like a missing id, for reads and writes", async ({ people }) => {
    const same = async (call: (id: string) => Promise<unknown>) => {
      const foreign = await refusal(call("b1"));
      const missing = await refusal(call("no-such-item"));
      expect(foreign).toEqual({ reason: "NOT_FOUND", detail: { id: "b1" } });
      expect(missing).toEqual({ reason: "NOT_FOUND", detail: { id: "no-such-item" } });
    };
    await same((id) => alphaOperator.workItems.get({ id }));
    await same((id) => alphaOperator.leases.history({ workItemId: id }));
    await same((id) => alphaOperator.dashboard.neighbourhood({ id }));
    await same((id) => alphaOperator.workItems.setPriority({ id, priority: 5 }));
    await same((id) => alphaOperator.workItems.cancel({ id, reason: "no" }));
    await same((id) => alphaOperator.workItems.move({ id, parentId: null }));
    await same((id) => alphaOperator.workItems.update({ id, title: "x" }));
    await same((id) => alphaOperator.workItems.addDependency({ workItemId: "a1", dependsOnId: id }));
    await same((id) => alphaOperator.workItems.removeDependency({ workItemId: id, dependsOnId: "a1" }));
    await same((id) => alphaOperator.workItems.create({ title: "Child", parentId: id }));
    await same((id) => alphaOperator.workItems.create({ title: "Blocked", projectId: "alpha", dependsOn: [id] }));
    // Nothing changed on the beta item.
    expect(await people.operator.workItems.get({ id: "b1" })).toMatchObject({ priority: 0, status: "open", stage: "leased" });
  });

  it("a beta lease or attention request is NOT_FOUND like a missing one; notes and event pages of a beta item are empty", async () => {
    const missingLease = "00000000-0000-4000-8000-000000000000";
    expect(await refusal(alphaOperator.leases.get({ leaseId: betaLease.id }))).toEqual({ reason: "NOT_FOUND", detail: { id: betaLease.id } });
    expect((await refusal(alphaOperator.leases.get({ leaseId: missingLease }))).reason).toBe("NOT_FOUND");
    expect(await refusal(alphaOperator.leases.revoke({ leaseId: betaLease.id, epoch: betaLease.epoch, reason: "no" }))).toEqual({ reason: "NOT_FOUND", detail: { id: betaLease.id } });
    expect(await refusal(alphaOperator.attention.get({ id: betaRequestId }))).toEqual({ reason: "NOT_FOUND", detail: { id: betaRequestId } });
    expect(await refusal(alphaOperator.attention.wait({ id: betaRequestId, timeoutSeconds: 1 }))).toEqual({ reason: "NOT_FOUND", detail: { id: betaRequestId } });
    expect(await refusal(alphaOperator.attention.resolve({ id: betaRequestId, resolution: "no" }))).toEqual({ reason: "NOT_FOUND", detail: { id: betaRequestId } });
    expect(await alphaOperator.notes.list({ workItemId: "b1" })).toEqual({ items: [], nextCursor: null });
    expect((await alphaOperator.events.list({ workItemId: "b1" })).items).toEqual([]);
    expect((await alphaOperator.events.list({ workItemId: "b1", order: "desc" })).items).toEqual([]);
  });

  it("lists, counts, inbox, active leases and neighbourhoods leave beta out; projectId narrows, outside the scope to nothing", async ({ people }) => {
    expect((await alphaOperator.workItems.list()).items.map((item) => item.id)).toEqual(["a1", "a2"]);
    expect((await alphaOperator.workItems.list({ projectId: "beta" })).items).toEqual([]);
    expect((await people.operator.workItems.list({ projectId: "beta" })).items.map((item) => item.id)).toEqual(["b1", "b2", "b3"]);
    expect((await alphaOperator.workItems.list({ search: "Beta" })).items).toEqual([]);

    const summary = await alphaOperator.dashboard.summary();
    expect(summary.stages).toMatchObject({ ready: 1, blocked: 1, leased: 0, needs_attention: 0 });
    expect(summary).toMatchObject({ activeLeases: 0, openAttention: 0 });
    expect((await people.operator.dashboard.summary({ projectId: "beta" })).stages).toMatchObject({ ready: 1, leased: 1, needs_attention: 1 });
    expect((await alphaOperator.dashboard.summary({ projectId: "beta" })).stages.leased).toBe(0);

    expect(await alphaOperator.dashboard.inbox({ status: "open" })).toEqual([]);
    expect((await people.operator.dashboard.inbox({ status: "open", projectId: "beta" })).map((entry) => entry.id)).toEqual([betaRequestId]);
    expect((await people.operator.dashboard.inbox({ status: "open", projectId: "alpha" }))).toEqual([]);
    expect((await alphaOperator.attention.list()).items).toEqual([]);
    expect((await people.operator.attention.list({ projectId: "beta" })).items.map((request) => request.id)).toEqual([betaRequestId]);
    expect(await alphaOperator.leases.active()).toEqual([]);
    expect((await people.operator.leases.active({ projectId: "beta" })).map((lease) => lease.workItemId)).toEqual(["b1"]);

    const seen = await alphaOperator.dashboard.neighbourhood({ id: "a2" });
    expect(seen.dependencies).toEqual([]);
    expect((await people.operator.dashboard.neighbourhood({ id: "a2" })).dependencies.map((d) => d.id)).toEqual(["b2"]);

    const events = await alphaOperator.events.list({ limit: 500 });
    expect(new Set(events.items.map((event) => event.workItemId))).toEqual(new Set(["a1", "a2"]));
    expect((await people.operator.events.list({ projectId: "alpha", limit: 500 })).items).toEqual(events.items);
    expect((await alphaOperator.events.list({ order: "desc", limit: 500 })).items.map((e) => e.sequence)).toEqual(events.items.map((e) => e.sequence).reverse());
    expect((await alphaOperator.projects.list()).map((project) => project.id)).toEqual(["alpha"]);

    const everything = (await people.operator.dashboard.activity({ range: "hour" })).totals;
    expect(everything).toMatchObject({ claims: 2, attentionRequests: 1 });
    expect((await alphaOperator.dashboard.activity({ range: "hour" })).totals).toMatchObject({ claims: 0, attentionRequests: 0, readyToClaimP50: null });

    // b3's blocking request ended its lease: counted for everyone, not for a token scoped to alpha.
    expect((await people.operator.dashboard.endedLastHour()).attention_requested).toBe(1);
    expect(Object.values(await alphaOperator.dashboard.endedLastHour()).every((n) => n === 0)).toBe(true);

    const betaWorker = (list: { workerId: string }[]) => list.find((worker) => worker.workerId === "w-beta");
    expect(betaWorker(await people.operator.workers.list())).toMatchObject({ liveLeases: 1, lastHour: { claimed: 2 } });
    expect(betaWorker(await alphaOperator.workers.list())).toMatchObject({ liveLeases: 0, lastSeenAt: null, lastHour: { claimed: 0 } });
  });

  it("a create in another project is FORBIDDEN; a single-project agent creates there by default; move across projects is VALIDATION", async ({ database, people }) => {
    expect(await refusal(alphaOperator.workItems.create({ title: "Intruder", projectId: "beta" }))).toMatchObject({ reason: "FORBIDDEN", detail: { projectId: "beta" } });
    expect((await refusal(alphaOperator.workItems.create({ title: "Default", projectId: "default" }))).reason).toBe("FORBIDDEN");
    // An operator scoped to one project still defaults to "default" (only agents get the default), which it may not use.
    expect((await refusal(alphaOperator.workItems.create({ title: "No project" }))).reason).toBe("FORBIDDEN");
    expect(await alphaOperator.workItems.create({ id: "a3", title: "Alpha three", projectId: "alpha" })).toMatchObject({ projectId: "alpha" });

    const alphaAgent = await scopedCaller(database.db, people, { role: "agent", workerId: "w-alpha", projects: ["alpha"] });
    expect(await alphaAgent.workItems.create({ id: "a-by-agent", title: "By agent" })).toMatchObject({ projectId: "alpha" });
    const twoProjects = await scopedCaller(database.db, people, { role: "agent", workerId: "w-two", projects: ["alpha", "beta"] });
    expect((await refusal(twoProjects.workItems.create({ title: "Where?" }))).reason).toBe("FORBIDDEN");
    expect(await (await people.agent("w-any")).workItems.create({ id: "unscoped-agent", title: "Any" })).toMatchObject({ projectId: "default" });

    expect(await refusal(people.operator.workItems.move({ id: "a3", parentId: "b2" }))).toMatchObject({ reason: "VALIDATION", detail: { projectId: "alpha", parentProjectId: "beta" } });
    expect((await people.operator.workItems.get({ id: "a3" })).parentId).toBeNull();
  });

  it("lease-bound writes by a scoped token on a beta lease are refused as an unknown lease and change nothing", async ({ database, people }) => {
    // Same worker id as the lease's holder, but its token only sees alpha.
    const scoped = await scopedCaller(database.db, people, { role: "agent", workerId: "w-beta", projects: ["alpha"] });
    const ref = { leaseId: betaLease.id, epoch: betaLease.epoch };
    const unknown = { reason: "LEASE_NOT_CURRENT", detail: { kind: "unknown", leaseId: betaLease.id, epoch: betaLease.epoch } };
    expect(await refusal(scoped.leases.renew({ ...ref, durationSeconds: 60 }))).toEqual(unknown);
    expect(await refusal(scoped.leases.release({ ...ref, evidence: "stolen" }))).toEqual(unknown);
    expect(await refusal(scoped.leases.cancel({ ...ref, reason: "stolen" }))).toEqual(unknown);
    expect(await refusal(scoped.leases.note({ ...ref, content: "stolen" }))).toEqual(unknown);
    expect(await refusal(scoped.leases.decompose({ ...ref, children: [{ title: "stolen" }] }))).toEqual(unknown);
    expect(await refusal(scoped.attention.request({ ...ref, kind: "decision", question: "stolen?" }))).toEqual(unknown);
    const item = await people.operator.workItems.get({ id: "b1" });
    expect(item).toMatchObject({ stage: "leased", openChildCount: 0, currentLease: { id: betaLease.id, expiresAt: betaLease.expiresAt } });
  });

  it("events.stream of a scoped token leaves beta out", async ({ server, people }) => {
    const { token } = await people.admin.tokens.create({ role: "operator", projects: ["alpha"] });
    const input = { after: 0 };
    const stream = await openSse(`${server.url}/api/trpc/events.stream?input=${encodeURIComponent(JSON.stringify(input))}`, { authorization: `Bearer ${token}` });
    await people.operator.workItems.create({ id: "b-late", title: "Beta late", projectId: "beta" });
    await people.operator.workItems.create({ id: "a-late", title: "Alpha late", projectId: "alpha" });
    const seen: string[] = [];
    for (;;) {
      const message = await stream.next();
      const event = JSON.parse(message!.data) as { workItemId: string };
      seen.push(event.workItemId);
      if (event.workItemId === "a-late") break;
    }
    stream.close();
    expect(seen.every((id) => id.startsWith("a"))).toBe(true);
    expect(seen).toContain("a1");
  });

  it("a webhook for alpha is queued deliveries only for alpha's events", async ({ sql, people }) => {
    const hook = await people.admin.webhooks.create({ url: "http://127.0.0.1:9/hook", projectId: "alpha" });
    expect((await sql.query("SELECT project_id FROM webhooks WHERE id = $1", [hook.id])).rows[0].project_id).toBe("alpha");
    await people.operator.workItems.create({ id: "b-hooked", title: "Beta", projectId: "beta" });
    await people.operator.workItems.create({ id: "a-hooked", title: "Alpha", projectId: "alpha" });
    const { rows } = await sql.query<{ item: string }>(
      "SELECT e.work_item_id AS item FROM webhook_deliveries d JOIN events e ON e.sequence = d.event_sequence WHERE d.webhook_id = $1",
      [hook.id],
    );
    expect(rows.map((row) => row.item)).toEqual(["a-hooked"]);
    expect((await refusal(people.admin.webhooks.create({ url: "http://127.0.0.1:9/x", projectId: "nowhere" }))).reason).toBe("NOT_FOUND");
  });
});
