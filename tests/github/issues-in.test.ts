import { beforeEach, describe, expect, vi } from "vitest";
import { servesApi } from "../../server/http/node-api";
import { sweepOldGithubDeliveries } from "../../server/integrations/github/operations";
import { sweepExpiredLeases } from "../../server/operations/sweep";
import { refusal, advanceClockPast } from "../support/fixtures";
import { deliver, githubEnv, githubTest, issuesPayload, REPO, signature } from "./support";

/*
 * Issue 29, issues in: GitHub's signed `issues` deliveries (real payload shapes from
 * @octokit/webhooks-examples, signed as GitHub signs them) create and update items over the
 * Node API exactly as `npm start` serves it.
 */

const it = githubTest;
beforeEach(() => githubEnv());

const externalId = (n: number, repo = REPO) => `github:${repo}#${n}`;

describe("GitHub issues in", () => {
  it("refuses a delivery whose X-Hub-Signature-256 does not match (401) and changes nothing", async ({ server, people }) => {
    const payload = issuesPayload("opened", { number: 1 });
    expect((await deliver(server.url, "issues", payload, { secret: "another secret" })).status).toBe(401);
    expect((await deliver(server.url, "issues", payload, { signature: "sha256=" + "0".repeat(64) })).status).toBe(401);
    expect((await deliver(server.url, "issues", payload, { signature: signature("another secret", "x").replace("sha256=", "sha1=") })).status).toBe(401);
    expect((await people.operator.workItems.list({ externalId: externalId(1) })).items).toEqual([]);
  });

  it("answers 204 to an event type it does not sync, and 200 to ping", async ({ server }) => {
    expect((await deliver(server.url, "star", { action: "created" })).status).toBe(204);
    expect((await deliver(server.url, "ping", { zen: "Keep it logically awesome." })).status).toBe(200);
  });

  it("creates the item of a labelled issue: externalId, title, body, requires: labels; actor github:<sender>", async ({ server, people }) => {
    const payload = issuesPayload("opened", { number: 2, title: "Fix the README", body: "Two t's in commit.", labels: ["work-graph", "requires:docs", "bug", "requires:Bad Cap!"], sender: "octocat" });
    const response = await deliver(server.url, "issues", payload);
    expect(response).toMatchObject({ status: 200, body: { ok: true, result: "created" } });
    const [item] = (await people.operator.workItems.list({ externalId: externalId(2) })).items;
    expect(item).toMatchObject({ title: "Fix the README", description: "Two t's in commit.", requires: ["docs"], projectId: "default", externalId: externalId(2), stage: "ready" });
    const events = (await people.operator.events.list({ workItemId: item!.id })).items;
    expect(events[0]).toMatchObject({ type: "work_item.created", actor: "github:octocat" });
  });

  it("ignores an issue without the label until it is labelled", async ({ server, people }) => {
    expect((await deliver(server.url, "issues", issuesPayload("opened", { number: 3, labels: ["bug"] }))).body).toMatchObject({ result: "ignored" });
    expect((await people.operator.workItems.list({ externalId: externalId(3) })).items).toEqual([]);
    const labeled = await deliver(server.url, "issues", issuesPayload("labeled", { number: 3, labels: ["bug", "work-graph"], label: "work-graph" }));
    expect(labeled.body).toMatchObject({ result: "created" });
    expect((await people.operator.workItems.list({ externalId: externalId(3) })).items).toHaveLength(1);
  });

  it("edited updates title, body and requires; a replayed X-GitHub-Delivery changes nothing", async ({ server, people }) => {
    await deliver(server.url, "issues", issuesPayload("opened", { number: 4, title: "Old", body: "old body" }));
    const edit = await deliver(server.url, "issues", issuesPayload("edited", { number: 4, title: "New", body: "new body", labels: ["work-graph", "requires:gpu"] }));
    expect(edit.body).toMatchObject({ result: "updated" });
    const [item] = (await people.operator.workItems.list({ externalId: externalId(4) })).items;
    expect(item).toMatchObject({ title: "New", description: "new body", requires: ["gpu"] });

    await people.operator.workItems.update({ id: item!.id, title: "Changed here" });
    const replay = await deliver(server.url, "issues", issuesPayload("edited", { number: 4, title: "New", body: "new body" }), { deliveryId: edit.deliveryId });
    expect(replay).toMatchObject({ status: 200, body: { duplicate: true } });
    expect((await people.operator.workItems.get({ id: item!.id })).title).toBe("Changed here");
  });

  it("maps a repository to its project (WORK_GRAPH_GITHUB_PROJECTS)", async ({ server, people }) => {
    await people.admin.projects.create({ id: "mapped", name: "Mapped" });
    await deliver(server.url, "issues", issuesPayload("opened", { number: 5, repo: "Codertocat/mapped-repo" }));
    const [item] = (await people.operator.workItems.list({ projectId: "mapped", externalId: externalId(5, "Codertocat/mapped-repo") })).items;
    expect(item).toMatchObject({ projectId: "mapped" });
  });

  it("a task list becomes children (through the import); an edit adds only new open tasks", async ({ server, people }) => {
    const body = "Plan:\n- [ ] write the parser\n- [x] done already\n* [ ] test it\n";
    await deliver(server.url, "issues", issuesPayload("opened", { number: 6, body }));
    const [parent] = (await people.operator.workItems.list({ externalId: externalId(6) })).items;
    const children = (await people.operator.workItems.list({ parentId: parent!.id })).items;
    expect(children.map((child) => child.title).sort()).toEqual(["test it", "write the parser"]);
    expect(parent).toMatchObject({ stage: "waiting_on_children", openChildCount: 2 });

    await deliver(server.url, "issues", issuesPayload("edited", { number: 6, body: `${body}- [ ] document it\n` }));
    await deliver(server.url, "issues", issuesPayload("edited", { number: 6, body: `${body}- [ ] document it\n` }));
    const after = (await people.operator.workItems.list({ parentId: parent!.id })).items;
    expect(after.map((child) => child.title).sort()).toEqual(["document it", "test it", "write the parser"]);
  });

  it("depends on #N / blocked by #N become dependencies; one on an issue without an item is made at a later event", async ({ server, people }) => {
    await deliver(server.url, "issues", issuesPayload("opened", { number: 10 }));
    await deliver(server.url, "issues", issuesPayload("opened", { number: 11, body: "This depends on #10." }));
    const [blocker] = (await people.operator.workItems.list({ externalId: externalId(10) })).items;
    const [dependent] = (await people.operator.workItems.list({ externalId: externalId(11) })).items;
    expect(dependent).toMatchObject({ dependsOn: [blocker!.id], stage: "blocked" });

    await deliver(server.url, "issues", issuesPayload("opened", { number: 13, body: "Blocked by #12" }));
    const [waiting] = (await people.operator.workItems.list({ externalId: externalId(13) })).items;
    expect(waiting!.dependsOn).toEqual([]);
    await deliver(server.url, "issues", issuesPayload("opened", { number: 12 }));
    await deliver(server.url, "issues", issuesPayload("edited", { number: 13, body: "Blocked by #12" }));
    const [twelve] = (await people.operator.workItems.list({ externalId: externalId(12) })).items;
    expect((await people.operator.workItems.get({ id: waiting!.id })).dependsOn).toEqual([twelve!.id]);
  });

  it("label removed: the item stays, an event says so", async ({ server, people }) => {
    await deliver(server.url, "issues", issuesPayload("opened", { number: 14 }));
    const response = await deliver(server.url, "issues", issuesPayload("unlabeled", { number: 14, labels: [], label: "work-graph" }));
    expect(response.body).toMatchObject({ result: "unlabeled" });
    const [item] = (await people.operator.workItems.list({ externalId: externalId(14) })).items;
    expect(item).toMatchObject({ status: "open" });
    const events = (await people.operator.events.list({ workItemId: item!.id })).items;
    expect(events.at(-1)).toMatchObject({ type: "github.unlabeled", actor: "github:Codertocat" });
  });

  it("closed cancels a free item", async ({ server, people }) => {
    await deliver(server.url, "issues", issuesPayload("opened", { number: 20 }));
    expect((await deliver(server.url, "issues", issuesPayload("closed", { number: 20, sender: "closer" }))).body).toMatchObject({ result: "cancelled" });
    const [item] = (await people.operator.workItems.list({ externalId: externalId(20) })).items;
    expect(item).toMatchObject({ status: "cancelled" });
    expect((await people.operator.events.list({ workItemId: item!.id })).items.at(-1)).toMatchObject({ type: "work_item.status_changed", actor: "github:closer" });
  });

  it("closed while leased never pre-empts: a note tells the worker; a release keeps it released", async ({ server, people }) => {
    await deliver(server.url, "issues", issuesPayload("opened", { number: 21 }));
    const [item] = (await people.operator.workItems.list({ externalId: externalId(21) })).items;
    const agent = await people.agent("w-21");
    const { lease } = (await agent.leases.claim({ workItemId: item!.id }))!;
    expect((await deliver(server.url, "issues", issuesPayload("closed", { number: 21 }))).body).toMatchObject({ result: "cancel_pending" });
    expect(await people.operator.workItems.get({ id: item!.id })).toMatchObject({ stage: "leased" });
    const notes = (await people.operator.notes.list({ workItemId: item!.id })).items;
    expect(notes[0]!.content).toMatch(/closed by github:Codertocat while this item is leased/);
    await agent.leases.release({ leaseId: lease.id, epoch: lease.epoch, evidence: "done" });
    expect(await people.operator.workItems.get({ id: item!.id })).toMatchObject({ status: "released" });
  });

  it("closed while leased: cancelled when that lease ends without a release (hand back, expiry)", async ({ server, people, sql, database }) => {
    await deliver(server.url, "issues", issuesPayload("opened", { number: 22 }));
    await deliver(server.url, "issues", issuesPayload("opened", { number: 23 }));
    const [handed] = (await people.operator.workItems.list({ externalId: externalId(22) })).items;
    const [expiring] = (await people.operator.workItems.list({ externalId: externalId(23) })).items;
    const agent = await people.agent("w-22");
    const first = (await agent.leases.claim({ workItemId: handed!.id }))!.lease;
    const second = (await agent.leases.claim({ workItemId: expiring!.id, durationSeconds: 1 }))!.lease;
    await deliver(server.url, "issues", issuesPayload("closed", { number: 22 }));
    await deliver(server.url, "issues", issuesPayload("closed", { number: 23 }));

    const { workItem } = await agent.leases.handBack({ leaseId: first.id, epoch: first.epoch, reason: "not mine" });
    expect(workItem).toMatchObject({ status: "cancelled" });
    const cancelled = (await people.operator.events.list({ workItemId: handed!.id })).items.at(-1);
    expect(cancelled).toMatchObject({ type: "work_item.status_changed", actor: "github:Codertocat", data: { to: "cancelled", reason: expect.stringMatching(/closed while it was leased/) } });

    expect(await people.operator.workItems.get({ id: expiring!.id })).toMatchObject({ status: "open" });
    await advanceClockPast(sql, second.expiresAt);
    await sweepExpiredLeases(database.db);
    expect(await people.operator.workItems.get({ id: expiring!.id })).toMatchObject({ status: "cancelled" });
  });

  it("closed while leased: a reclaim of the expired lease cancels it instead of leasing it", async ({ server, people, sql }) => {
    await deliver(server.url, "issues", issuesPayload("opened", { number: 24 }));
    const [item] = (await people.operator.workItems.list({ externalId: externalId(24) })).items;
    const { lease } = (await (await people.agent("w-24")).leases.claim({ workItemId: item!.id, durationSeconds: 1 }))!;
    await deliver(server.url, "issues", issuesPayload("closed", { number: 24 }));
    await advanceClockPast(sql, lease.expiresAt);
    const refused = await refusal((await people.agent("w-24b")).leases.claim({ workItemId: item!.id }));
    expect(refused).toMatchObject({ reason: "NOT_CLAIMABLE", detail: { stage: "cancelled" } });
    expect(await people.operator.workItems.get({ id: item!.id })).toMatchObject({ status: "cancelled", currentLease: null });
    expect((await people.operator.leases.history({ workItemId: item!.id })).map((l) => l.outcome)).toEqual(["expired"]);
  });

  it("a refused delivery (a mapped project that does not exist) answers 422 and can be redelivered after the fix", async ({ server, people }) => {
    vi.stubEnv("WORK_GRAPH_GITHUB_PROJECTS", "codertocat/late-repo=late");
    const payload = issuesPayload("opened", { number: 30, repo: "Codertocat/late-repo" });
    const first = await deliver(server.url, "issues", payload);
    expect(first).toMatchObject({ status: 422, body: { reason: "NOT_FOUND" } });
    await people.admin.projects.create({ id: "late", name: "Late" });
    expect((await deliver(server.url, "issues", payload, { deliveryId: first.deliveryId })).body).toMatchObject({ result: "created" });
  });

  it("is off (404) without the secret, and served by the Node API (also under --api-only)", async ({ server }) => {
    expect(servesApi("/api/integrations/github/webhook")).toBe(true);
    vi.stubEnv("WORK_GRAPH_GITHUB_WEBHOOK_SECRET", "");
    expect((await deliver(server.url, "issues", issuesPayload("opened", { number: 31 }))).status).toBe(404);
  });

  it("closed while leased: cancelled when an operator revokes the lease, or a blocking question or a decomposition ends it", async ({ server, people }) => {
    for (const n of [25, 26, 27]) await deliver(server.url, "issues", issuesPayload("opened", { number: n }));
    const ids = await Promise.all([25, 26, 27].map(async (n) => (await people.operator.workItems.list({ externalId: externalId(n) })).items[0]!.id));
    const agent = await people.agent("w-25");
    const leases = await Promise.all(ids.map(async (id) => (await agent.leases.claim({ workItemId: id }))!.lease));
    for (const n of [25, 26, 27]) await deliver(server.url, "issues", issuesPayload("closed", { number: n }));

    await people.operator.leases.revoke({ leaseId: leases[0]!.id, epoch: leases[0]!.epoch, reason: "stop" });
    await agent.attention.request({ leaseId: leases[1]!.id, epoch: leases[1]!.epoch, kind: "decision", question: "Still needed?" });
    const split = await agent.leases.decompose({ leaseId: leases[2]!.id, epoch: leases[2]!.epoch, children: [{ title: "part one" }] });
    for (const id of ids) expect(await people.operator.workItems.get({ id })).toMatchObject({ status: "cancelled" });
    expect(await people.operator.workItems.get({ id: split.children[0]!.id })).toMatchObject({ status: "cancelled" });
  });

  it("the sweep forgets delivery ids GitHub can no longer redeliver (after 7 days)", async ({ server, database, sql }) => {
    const recent = await deliver(server.url, "issues", issuesPayload("opened", { number: 40 }));
    const old = await deliver(server.url, "issues", issuesPayload("opened", { number: 41 }));
    await sql.query("UPDATE github_deliveries SET received_at = work_graph_clock() - interval '8 days' WHERE delivery_id = $1", [old.deliveryId]);
    expect(await sweepOldGithubDeliveries(database.db)).toBe(1);
    const { rows } = await sql.query<{ delivery_id: string }>("SELECT delivery_id FROM github_deliveries WHERE delivery_id = ANY($1)", [[recent.deliveryId, old.deliveryId]]);
    expect(rows.map((row) => row.delivery_id)).toEqual([recent.deliveryId]);
  });
});
