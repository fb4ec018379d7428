import type pg from "pg";
import { describe, expect, vi } from "vitest";
import type { WorkGraphEvent } from "@work-graph/contract";
import { startWebhookDispatcher } from "../../server/integrations/webhooks/dispatcher";
import { advanceClockPast } from "../support/fixtures";
import { deliveryRounds, signatureIsValid, webhookTest, type Receiver } from "./support";

const it = webhookTest
  // Set up for every test (auto), after the receiver and torn down before it.
  .extend("dispatcher", { scope: "file", auto: true }, ({ database, receiver: _ }, { onCleanup }) => {
    const errors: unknown[] = [];
    const dispatcher = startWebhookDispatcher(database.db, { publicUrl: "https://wg.example.com", onError: (error) => errors.push(error) });
    onCleanup(async () => {
      await dispatcher.stop();
      expect(errors).toEqual([]);
    });
    return dispatcher;
  })
  .extend("afterADeliveryRound", { scope: "file" }, ({ receiver, people }) => deliveryRounds(receiver, people.admin));

type JsonBody = WorkGraphEvent & { workItem: { id: string; title: string; stage: string } | null; url: string };
const bodies = (receiver: Receiver, path: string) => receiver.at(path).map((r) => JSON.parse(r.body) as JsonBody);

async function deliveryRows(sql: pg.Client, webhookId: string) {
  return (await sql.query<{ id: string; status: string; attempts: number; event_type: string; event_sequence: string }>(
    "SELECT id::text, status, attempts, event_type, event_sequence FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY event_sequence",
    [webhookId],
  )).rows;
}

describe("webhook delivery", () => {
  it("POSTs a committed event within 3 s, signed over \"<t>.<raw body>\", with the event, its item and the item's link", async ({ sql, people, receiver }) => {
    const hook = await people.admin.webhooks.create({ url: receiver.on("/basic", () => ({ status: 204 })), events: ["work_item.created"] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const committedAt = Date.now();
    await people.operator.workItems.create({ id: "basic-1", title: "Ship the release" });
    await expect.poll(() => receiver.at("/basic").length, { timeout: 3_000 }).toBeGreaterThan(0);
    const [request] = receiver.at("/basic");
    expect(request!.at - committedAt).toBeLessThan(3_000);

    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers["x-work-graph-event"]).toBe("work_item.created");
    expect(signatureIsValid(hook.secret, request!.headers["x-work-graph-signature"], request!.body)).toBe(true);
    expect(signatureIsValid("whsec_wrong", request!.headers["x-work-graph-signature"], request!.body)).toBe(false);
    const t = Number(/t=(\d+)/.exec(String(request!.headers["x-work-graph-signature"]))![1]);
    const { rows: [now] } = await sql.query<{ s: number }>("SELECT extract(epoch FROM work_graph_clock())::int AS s");
    expect(Math.abs(now!.s - t)).toBeLessThan(60);

    const body = JSON.parse(request!.body) as JsonBody;
    const [event] = (await people.admin.events.list({ workItemId: "basic-1" })).items;
    expect(body).toEqual({ ...event, workItem: { id: "basic-1", title: "Ship the release", stage: "ready" }, url: "https://wg.example.com/items/basic-1" });

    await expect.poll(async () => (await people.admin.webhooks.deliveries({ webhookId: hook.id }))[0]?.status).toBe("delivered");
    const [delivery] = await people.admin.webhooks.deliveries({ webhookId: hook.id });
    expect(request!.headers["x-work-graph-delivery"]).toBe(delivery!.id);
    expect(delivery).toMatchObject({ webhookId: hook.id, eventSequence: event!.sequence, eventType: "work_item.created", attempts: 1, responseStatus: 204, error: null, nextAttemptAt: null });
    const [listed] = (await people.admin.webhooks.list()).filter((w) => w.id === hook.id);
    expect(listed).toMatchObject({ failing: false, lastError: null });
    expect(listed!.lastDeliveredAt).toBe(delivery!.deliveredAt);
  });

  it("sends only the event types a webhook asked for, by exact type and by prefix", async ({ sql, people, receiver, afterADeliveryRound }) => {
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
    await expect.poll(() => receiver.at("/all").length).toBe(types.length);
    await expect.poll(() => receiver.at("/prefix").length).toBe(2);
    await expect.poll(() => receiver.at("/exact").length).toBe(1);
    await afterADeliveryRound(); // anything else would have been claimed and sent by now
    expect(bodies(receiver, "/all").map((b) => b.type).sort()).toEqual([...types].sort());
    expect(bodies(receiver, "/prefix").map((b) => b.type).sort()).toEqual(["attention.requested", "attention.resolved"]);
    expect(bodies(receiver, "/exact").map((b) => b.type)).toEqual(["attention.resolved"]);
    expect((await deliveryRows(sql, exact.id)).map((d) => d.event_type)).toEqual(["attention.resolved"]);
    expect((await deliveryRows(sql, prefix.id)).length).toBe(2);
    expect((await deliveryRows(sql, all.id)).length).toBe(types.length);
  });

  it("retries a failing receiver with backoff under one delivery id: fails twice, then succeeds on the third attempt", async ({ people, receiver, afterADeliveryRound }) => {
    const url = receiver.on("/flaky", (n) => (n < 2 ? { status: 503, body: "x".repeat(5_000) } : { status: 200, body: "thanks" }));
    const hook = await people.admin.webhooks.create({ url, events: ["work_item.created"] });
    await people.operator.workItems.create({ id: "flaky-1", title: "Flaky receiver" });
    await expect.poll(() => receiver.at("/flaky").length, { timeout: 30_000 }).toBe(3);
    const attempts = receiver.at("/flaky");
    expect(new Set(attempts.map((a) => a.headers["x-work-graph-delivery"])).size).toBe(1);
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
    // About 2 s, then about 4 s apart (the database decides; allow for the poll interval).
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(1_800);
    expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(3_800);

    await expect.poll(async () => (await people.admin.webhooks.deliveries({ webhookId: hook.id }))[0]?.status).toBe("delivered");
    const [delivery] = await people.admin.webhooks.deliveries({ webhookId: hook.id });
    expect(delivery).toMatchObject({ attempts: 3, responseStatus: 200, responseBody: "thanks", error: null });
    await afterADeliveryRound();
    expect(receiver.at("/flaky").length).toBe(3);
  });

  it("keeps a failing answer (truncated) and the error for the deliveries view, and marks the webhook failing", async ({ people, receiver }) => {
    const hook = await people.admin.webhooks.create({ url: receiver.on("/broken", () => ({ status: 500, body: "y".repeat(5_000) })), events: ["work_item.created"] });
    await people.operator.workItems.create({ id: "broken-1", title: "Broken receiver" });
    const [delivery] = await vi.waitFor(async () => {
      const rows = await people.admin.webhooks.deliveries({ webhookId: hook.id });
      expect(rows[0]).toMatchObject({ attempts: 1, error: expect.any(String) });
      return rows;
    }, { timeout: 15_000, interval: 20 });
    expect(delivery).toMatchObject({ status: "pending", responseStatus: 500, error: "HTTP 500" });
    expect(delivery!.responseBody!.length).toBeLessThanOrEqual(1_001);
    expect(delivery!.responseBody!.startsWith("yyyy")).toBe(true);
    expect(Date.parse(delivery!.nextAttemptAt!)).toBeGreaterThan(Date.parse(delivery!.createdAt));
    const [listed] = (await people.admin.webhooks.list()).filter((w) => w.id === hook.id);
    expect(listed).toMatchObject({ failing: true, lastError: "HTTP 500", lastDeliveredAt: null });
    await people.admin.webhooks.delete({ id: hook.id });
  });

  it("does not follow redirects", async ({ people, receiver }) => {
    receiver.on("/moved-here", () => ({ status: 200 }));
    const hook = await people.admin.webhooks.create({
      url: receiver.on("/moved", () => ({ status: 302, headers: { location: `${receiver.base}/moved-here` } })),
      events: ["work_item.created"],
    });
    await people.operator.workItems.create({ id: "redirect-1", title: "Redirected receiver" });
    const [delivery] = await vi.waitFor(async () => {
      const rows = await people.admin.webhooks.deliveries({ webhookId: hook.id });
      expect(rows[0]?.error).toEqual(expect.any(String));
      return rows;
    }, { timeout: 15_000, interval: 20 });
    expect(delivery).toMatchObject({ status: "pending", responseStatus: 302 });
    expect(delivery!.error).toMatch(/redirect not followed/);
    expect(receiver.at("/moved-here")).toEqual([]);
    await people.admin.webhooks.delete({ id: hook.id });
  });

  it("never delivers an event whose transaction rolled back", async ({ sql, people, receiver, afterADeliveryRound }) => {
    const hook = await people.admin.webhooks.create({ url: receiver.on("/rollback", () => ({ status: 200 })), events: ["work_item.*"] });
    await sql.query("BEGIN");
    await sql.query("INSERT INTO work_items (id, title) VALUES ('rolled-back', 'never happened')");
    await sql.query("INSERT INTO events (work_item_id, type, actor) VALUES ('rolled-back', 'work_item.created', 'test')");
    const { rows: [queued] } = await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1", [hook.id]);
    expect(queued!.n).toBe(1); // the outbox row exists inside the transaction…
    await afterADeliveryRound(); // …while the dispatcher claims (it cannot see it)
    await sql.query("ROLLBACK");
    await people.operator.workItems.create({ id: "after-rollback", title: "Committed after the rollback" });
    await expect.poll(() => receiver.at("/rollback").length).toBe(1);
    await afterADeliveryRound();
    expect(bodies(receiver, "/rollback").map((b) => b.workItemId)).toEqual(["after-rollback"]);
    expect((await deliveryRows(sql, hook.id)).length).toBe(1);
  });

  it("stops delivering once delete returns: nothing new is queued and pending retries end", async ({ sql, people, receiver, afterADeliveryRound }) => {
    const url = receiver.on("/deleted", () => ({ status: 500 }));
    const hook = await people.admin.webhooks.create({ url, events: ["work_item.created"] });
    await people.operator.workItems.create({ id: "delete-1", title: "Before delete" });
    await expect.poll(() => receiver.at("/deleted").length).toBe(1);
    await expect.poll(async () => (await people.admin.webhooks.deliveries({ webhookId: hook.id }))[0]?.error).toBe("HTTP 500");
    const [retry] = await people.admin.webhooks.deliveries({ webhookId: hook.id });
    expect(await people.admin.webhooks.delete({ id: hook.id })).toEqual({ id: hook.id });
    const seen = receiver.at("/deleted").length;
    await people.operator.workItems.create({ id: "delete-2", title: "After delete" });
    // Past the moment the retry was due (≈2 s after the first attempt), and a delivery round after it.
    await advanceClockPast(sql, retry!.nextAttemptAt!);
    await afterADeliveryRound();
    expect(receiver.at("/deleted").length).toBe(seen);
    expect((await deliveryRows(sql, hook.id)).map((d) => d.status)).toEqual(["failed"]);
    expect((await people.admin.webhooks.list()).map((w) => w.id)).not.toContain(hook.id);
    await expect(people.admin.webhooks.deliveries({ webhookId: hook.id })).rejects.toMatchObject({ cause: { reason: "NOT_FOUND" } });
  });

  it("formats for Slack: one line with who, what, which item and its link", async ({ people, receiver }) => {
    const hook = await people.admin.webhooks.create({ url: receiver.on("/slack", () => ({ status: 200, body: "ok" })), events: ["attention.requested"], format: "slack" });
    const agent = await people.agent("slack-agent");
    await people.operator.workItems.create({ id: "slack-1", title: "Migrate <billing> & invoices" });
    const { lease } = (await agent.leases.claim({ workItemId: "slack-1" }))!;
    await agent.attention.request({ leaseId: lease.id, epoch: lease.epoch, kind: "decision", question: "Keep the old\ninvoice numbers?" });
    await expect.poll(() => receiver.at("/slack").length).toBe(1);
    const body = JSON.parse(receiver.at("/slack")[0]!.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["text"]);
    expect(body.text).toBe(
      ":raising_hand: slack-agent asks about <https://wg.example.com/items/slack-1|Migrate &lt;billing&gt; &amp; invoices> (blocking): “Keep the old invoice numbers?”",
    );
    expect(signatureIsValid(hook.secret, receiver.at("/slack")[0]!.headers["x-work-graph-signature"], receiver.at("/slack")[0]!.body)).toBe(true);
  });

  it("sends a test event on request through the same outbox", async ({ people, receiver }) => {
    const hook = await people.admin.webhooks.create({ url: receiver.on("/test-event", () => ({ status: 200 })), events: ["lease.ended"] });
    const queued = await people.admin.webhooks.test({ id: hook.id });
    expect(queued).toMatchObject({ webhookId: hook.id, eventSequence: 0, eventType: "webhook.test", status: "pending", attempts: 0 });
    await expect.poll(() => receiver.at("/test-event").length, { timeout: 3_000 }).toBe(1);
    const [request] = receiver.at("/test-event");
    expect(request!.headers["x-work-graph-event"]).toBe("webhook.test");
    expect(request!.headers["x-work-graph-delivery"]).toBe(queued.id);
    expect(signatureIsValid(hook.secret, request!.headers["x-work-graph-signature"], request!.body)).toBe(true);
    expect(JSON.parse(request!.body)).toMatchObject({ type: "webhook.test", sequence: 0, workItem: null, url: "https://wg.example.com" });
  });
});
