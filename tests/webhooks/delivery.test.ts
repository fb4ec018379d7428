import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkGraphEvent } from "../../server/domain/types";
import { startWebhookDispatcher, type WebhookDispatcher } from "../../server/webhooks/dispatcher";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { actors } from "../support/fixtures";
import { pause, signatureIsValid, startReceiver, waitFor } from "./support";

let database: TestDatabase;
let sql: pg.Client;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let dispatcher: WebhookDispatcher;
let people: Awaited<ReturnType<typeof actors>>;
const errors: unknown[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  sql = await database.connect();
  receiver = await startReceiver();
  people = await actors(database);
  dispatcher = startWebhookDispatcher(database.db, { publicUrl: "https://wg.example.com", onError: (error) => errors.push(error) });
});
afterAll(async () => {
  await dispatcher.stop();
  await receiver.close();
  await database.close();
  expect(errors).toEqual([]);
});

type JsonBody = WorkGraphEvent & { workItem: { id: string; title: string; stage: string } | null; url: string };
const bodies = (path: string) => receiver.at(path).map((r) => JSON.parse(r.body) as JsonBody);

async function deliveryRows(webhookId: string) {
  return (await sql.query<{ id: string; status: string; attempts: number; event_type: string; event_sequence: string }>(
    "SELECT id::text, status, attempts, event_type, event_sequence FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY event_sequence",
    [webhookId],
  )).rows;
}

describe("webhook delivery", () => {
  it("POSTs a committed event within 3 s, signed over \"<t>.<raw body>\", with the event, its item and the item's link", async () => {
    const hook = await people.admin.webhooks.create({ url: receiver.on("/basic", () => ({ status: 204 })), events: ["work_item.created"] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{40,}$/);
    const committedAt = Date.now();
    await people.operator.workItems.create({ id: "basic-1", title: "Ship the release" });
    const [request] = await waitFor("the delivery", () => receiver.at("/basic").length > 0 && receiver.at("/basic"), 3_000);
    expect(request!.at - committedAt).toBeLessThan(3_000);

    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers["x-work-graph-event"]).toBe("work_item.created");
    expect(signatureIsValid(hook.secret, request!.headers["x-work-graph-signature"], request!.body)).toBe(true);
    expect(signatureIsValid("whsec_wrong", request!.headers["x-work-graph-signature"], request!.body)).toBe(false);
    const t = Number(/t=(\d+)/.exec(String(request!.headers["x-work-graph-signature"]))![1]);
    const { rows: [now] } = await sql.query<{ s: number }>("SELECT extract(epoch FROM clock_timestamp())::int AS s");
    expect(Math.abs(now!.s - t)).toBeLessThan(60);

    const body = JSON.parse(request!.body) as JsonBody;
    const [event] = (await people.admin.events.list({ workItemId: "basic-1" })).items;
    expect(body).toEqual({ ...event, workItem: { id: "basic-1", title: "Ship the release", stage: "ready" }, url: "https://wg.example.com/items/basic-1" });

    const delivery = await waitFor("the delivery to be recorded", async () => {
      const [row] = await people.admin.webhooks.deliveries({ webhookId: hook.id });
      return row?.status === "delivered" && row;
    });
    expect(request!.headers["x-work-graph-delivery"]).toBe(delivery.id);
    expect(delivery).toMatchObject({ webhookId: hook.id, eventSequence: event!.sequence, eventType: "work_item.created", attempts: 1, responseStatus: 204, error: null, nextAttemptAt: null });
    const [listed] = (await people.admin.webhooks.list()).filter((w) => w.id === hook.id);
    expect(listed).toMatchObject({ failing: false, lastError: null });
    expect(listed!.lastDeliveredAt).toBe(delivery.deliveredAt);
  });

  it("sends only the event types a webhook asked for, by exact type and by prefix", async () => {
    const exact = await people.admin.webhooks.create({ url: receiver.on("/exact", () => ({ status: 200 })), events: ["attention.resolved"] });
    const prefix = await people.admin.webhooks.create({ url: receiver.on("/prefix", () => ({ status: 200 })), events: ["attention.*"] });
    const all = await people.admin.webhooks.create({ url: receiver.on("/all", () => ({ status: 200 })) });
    const agent = await people.agent("filter-agent");
    await people.operator.workItems.create({ id: "filter-1", title: "Pick a database" });
    const { lease } = (await agent.leases.claim({ workItemId: "filter-1" }))!;
    const { request } = await agent.attention.request({ leaseId: lease.id, epoch: lease.epoch, kind: "decision", question: "Postgres or SQLite?" });
    await people.operator.attention.resolve({ id: request.id, resolution: "Postgres" });

    const { items: events } = await people.admin.events.list({ workItemId: "filter-1" });
    const types = events.map((e) => e.type);
    expect(types).toEqual(["work_item.created", "lease.claimed", "attention.requested", "lease.ended", "attention.resolved"]);
    await waitFor("all deliveries", () => receiver.at("/all").length === types.length);
    await waitFor("prefix deliveries", () => receiver.at("/prefix").length === 2);
    await waitFor("exact deliveries", () => receiver.at("/exact").length === 1);
    await pause(1_000); // a few more polls: nothing else may arrive
    expect(bodies("/all").map((b) => b.type).sort()).toEqual([...types].sort());
    expect(bodies("/prefix").map((b) => b.type).sort()).toEqual(["attention.requested", "attention.resolved"]);
    expect(bodies("/exact").map((b) => b.type)).toEqual(["attention.resolved"]);
    expect((await deliveryRows(exact.id)).map((d) => d.event_type)).toEqual(["attention.resolved"]);
    expect((await deliveryRows(prefix.id)).length).toBe(2);
    expect((await deliveryRows(all.id)).length).toBe(types.length);
  });

  it("retries a failing receiver with backoff under one delivery id: fails twice, then succeeds on the third attempt", async () => {
    const url = receiver.on("/flaky", (n) => (n < 2 ? { status: 503, body: "x".repeat(5_000) } : { status: 200, body: "thanks" }));
    const hook = await people.admin.webhooks.create({ url, events: ["work_item.created"] });
    await people.operator.workItems.create({ id: "flaky-1", title: "Flaky receiver" });
    await waitFor("three attempts", () => receiver.at("/flaky").length === 3, 30_000);
    const attempts = receiver.at("/flaky");
    expect(new Set(attempts.map((a) => a.headers["x-work-graph-delivery"])).size).toBe(1);
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
    // About 2 s, then about 4 s apart (the database decides; allow for the poll interval).
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(1_800);
    expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(3_800);

    const [delivery] = await waitFor("delivered", async () => {
      const rows = await people.admin.webhooks.deliveries({ webhookId: hook.id });
      return rows[0]?.status === "delivered" && rows;
    });
    expect(delivery).toMatchObject({ attempts: 3, responseStatus: 200, responseBody: "thanks", error: null });
    await pause(800);
    expect(receiver.at("/flaky").length).toBe(3);
  });

  it("keeps a failing answer (truncated) and the error for the deliveries view, and marks the webhook failing", async () => {
    const hook = await people.admin.webhooks.create({ url: receiver.on("/broken", () => ({ status: 500, body: "y".repeat(5_000) })), events: ["work_item.created"] });
    await people.operator.workItems.create({ id: "broken-1", title: "Broken receiver" });
    const [delivery] = await waitFor("a failed attempt", async () => {
      const rows = await people.admin.webhooks.deliveries({ webhookId: hook.id });
      return rows[0]?.attempts === 1 && rows[0].error !== null && rows;
    });
    expect(delivery).toMatchObject({ status: "pending", responseStatus: 500, error: "HTTP 500" });
    expect(delivery!.responseBody!.length).toBeLessThanOrEqual(1_001);
    expect(delivery!.responseBody!.startsWith("yyyy")).toBe(true);
    expect(Date.parse(delivery!.nextAttemptAt!)).toBeGreaterThan(Date.parse(delivery!.createdAt));
    const [listed] = (await people.admin.webhooks.list()).filter((w) => w.id === hook.id);
    expect(listed).toMatchObject({ failing: true, lastError: "HTTP 500", lastDeliveredAt: null });
    await people.admin.webhooks.delete({ id: hook.id });
  });

  it("does not follow redirects", async () => {
    receiver.on("/moved-here", () => ({ status: 200 }));
    const hook = await people.admin.webhooks.create({
      url: receiver.on("/moved", () => ({ status: 302, headers: { location: `${receiver.base}/moved-here` } })),
      events: ["work_item.created"],
    });
    await people.operator.workItems.create({ id: "redirect-1", title: "Redirected receiver" });
    const [delivery] = await waitFor("a failed attempt", async () => {
      const rows = await people.admin.webhooks.deliveries({ webhookId: hook.id });
      return rows[0]?.error ? rows : undefined;
    });
    expect(delivery).toMatchObject({ status: "pending", responseStatus: 302 });
    expect(delivery!.error).toMatch(/redirect not followed/);
    expect(receiver.at("/moved-here")).toEqual([]);
    await people.admin.webhooks.delete({ id: hook.id });
  });

  it("never delivers an event whose transaction rolled back", async () => {
    const hook = await people.admin.webhooks.create({ url: receiver.on("/rollback", () => ({ status: 200 })), events: ["work_item.*"] });
    await sql.query("BEGIN");
    await sql.query("INSERT INTO work_items (id, title) VALUES ('rolled-back', 'never happened')");
    await sql.query("INSERT INTO events (work_item_id, type, actor) VALUES ('rolled-back', 'work_item.created', 'test')");
    const { rows: [queued] } = await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1", [hook.id]);
    expect(queued!.n).toBe(1); // the outbox row exists inside the transaction…
    await pause(1_500); // …while dispatchers poll (they cannot see it)
    await sql.query("ROLLBACK");
    await people.operator.workItems.create({ id: "after-rollback", title: "Committed after the rollback" });
    await waitFor("the committed event", () => receiver.at("/rollback").length === 1);
    await pause(1_000);
    expect(bodies("/rollback").map((b) => b.workItemId)).toEqual(["after-rollback"]);
    expect((await deliveryRows(hook.id)).length).toBe(1);
  });

  it("stops delivering once delete returns: nothing new is queued and pending retries end", async () => {
    const url = receiver.on("/deleted", () => ({ status: 500 }));
    const hook = await people.admin.webhooks.create({ url, events: ["work_item.created"] });
    await people.operator.workItems.create({ id: "delete-1", title: "Before delete" });
    await waitFor("the first attempt", () => receiver.at("/deleted").length === 1);
    await waitFor("the attempt recorded", async () => (await people.admin.webhooks.deliveries({ webhookId: hook.id }))[0]?.error === "HTTP 500");
    expect(await people.admin.webhooks.delete({ id: hook.id })).toEqual({ id: hook.id });
    const seen = receiver.at("/deleted").length;
    await people.operator.workItems.create({ id: "delete-2", title: "After delete" });
    await pause(5_000); // past the first retry (≈2 s) and the second (≈4 s later would be ≈6 s: the first is enough)
    expect(receiver.at("/deleted").length).toBe(seen);
    expect((await deliveryRows(hook.id)).map((d) => d.status)).toEqual(["failed"]);
    expect((await people.admin.webhooks.list()).map((w) => w.id)).not.toContain(hook.id);
    await expect(people.admin.webhooks.deliveries({ webhookId: hook.id })).rejects.toMatchObject({ cause: { reason: "NOT_FOUND" } });
  });

  it("formats for Slack: one line with who, what, which item and its link", async () => {
    const hook = await people.admin.webhooks.create({ url: receiver.on("/slack", () => ({ status: 200, body: "ok" })), events: ["attention.requested"], format: "slack" });
    const agent = await people.agent("slack-agent");
    await people.operator.workItems.create({ id: "slack-1", title: "Migrate <billing> & invoices" });
    const { lease } = (await agent.leases.claim({ workItemId: "slack-1" }))!;
    await agent.attention.request({ leaseId: lease.id, epoch: lease.epoch, kind: "decision", question: "Keep the old\ninvoice numbers?" });
    await waitFor("the Slack message", () => receiver.at("/slack").length === 1);
    const body = JSON.parse(receiver.at("/slack")[0]!.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["text"]);
    expect(body.text).toBe(
      ":raising_hand: slack-agent asks about <https://wg.example.com/items/slack-1|Migrate &lt;billing&gt; &amp; invoices> (blocking): “Keep the old invoice numbers?”",
    );
    expect(signatureIsValid(hook.secret, receiver.at("/slack")[0]!.headers["x-work-graph-signature"], receiver.at("/slack")[0]!.body)).toBe(true);
  });

  it("sends a test event on request through the same outbox", async () => {
    const hook = await people.admin.webhooks.create({ url: receiver.on("/test-event", () => ({ status: 200 })), events: ["lease.ended"] });
    const queued = await people.admin.webhooks.test({ id: hook.id });
    expect(queued).toMatchObject({ webhookId: hook.id, eventSequence: 0, eventType: "webhook.test", status: "pending", attempts: 0 });
    const [request] = await waitFor("the test event", () => receiver.at("/test-event").length === 1 && receiver.at("/test-event"), 3_000);
    expect(request!.headers["x-work-graph-event"]).toBe("webhook.test");
    expect(request!.headers["x-work-graph-delivery"]).toBe(queued.id);
    expect(signatureIsValid(hook.secret, request!.headers["x-work-graph-signature"], request!.body)).toBe(true);
    expect(JSON.parse(request!.body)).toMatchObject({ type: "webhook.test", sequence: 0, workItem: null, url: "https://wg.example.com" });
  });
});
