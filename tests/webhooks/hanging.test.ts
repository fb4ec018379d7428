import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebhookDispatcher, type WebhookDispatcher } from "../../server/webhooks/dispatcher";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { actors } from "../support/fixtures";
import { startReceiver, waitFor } from "./support";

let database: TestDatabase;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let dispatcher: WebhookDispatcher;
const errors: unknown[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  receiver = await startReceiver();
  // The production defaults: 10 s timeout, 64 attempts per instance, 16 per webhook.
  dispatcher = startWebhookDispatcher(database.db, { publicUrl: "http://localhost:3000", onError: (error) => errors.push(error) });
});
afterAll(async () => {
  await dispatcher.stop();
  await receiver.close();
  await database.close();
  expect(errors).toEqual([]);
});

describe("a receiver that hangs", () => {
  it("is cut at 10 s and retried, while other webhooks are delivered within 3 s", async () => {
    const { admin, operator } = await actors(database);
    // Every first attempt hangs (holding all of this webhook's slots); later ones answer.
    const slow = await admin.webhooks.create({
      url: receiver.on("/hang", (n) => (n < 18 ? "hang" : { status: 200 })),
      events: ["work_item.created"],
    });
    for (let i = 0; i < 18; i++) await operator.workItems.create({ id: `hang-${i}`, title: `hanging ${i}` });
    await waitFor("the slow receiver's slots to fill", () => receiver.at("/hang").length >= 16, 10_000);

    const fast = await admin.webhooks.create({ url: receiver.on("/fast", () => ({ status: 200 })), events: ["work_item.priority_changed"] });
    const committedAt = Date.now();
    await operator.workItems.setPriority({ id: "hang-0", priority: 5 });
    const [fastRequest] = await waitFor("the other webhook's delivery", () => receiver.at("/fast").length === 1 && receiver.at("/fast"), 3_000);
    expect(fastRequest!.at - committedAt).toBeLessThan(3_000);
    expect(receiver.at("/hang").length).toBe(16); // its 16 slots still hang, the other 2 wait
    expect((await admin.webhooks.deliveries({ webhookId: fast.id }))[0]).toMatchObject({ status: "delivered" });

    const firstHang = receiver.at("/hang")[0]!;
    const cut = await waitFor(
      "the first attempt to be cut",
      async () => (await admin.webhooks.deliveries({ webhookId: slow.id })).find((d) => d.id === firstHang.headers["x-work-graph-delivery"] && d.error),
      30_000,
    );
    // The dispatcher's 10 s timer starts just before the request reaches us; on a loaded machine
    // it reaches us up to a second or so later, so the bounds below leave that much room.
    expect(Date.now() - firstHang.at).toBeGreaterThanOrEqual(8_500);
    expect(cut).toMatchObject({ attempts: 1, status: "pending", responseStatus: null, error: "no answer within 10 s" });

    await waitFor("every hanging delivery retried and delivered", async () => {
      const rows = await admin.webhooks.deliveries({ webhookId: slow.id });
      return rows.length === 18 && rows.every((d) => d.status === "delivered");
    }, 60_000);
    const retried = receiver.at("/hang").filter((r) => r.headers["x-work-graph-delivery"] === firstHang.headers["x-work-graph-delivery"]);
    expect(retried.length).toBe(2);
    expect(retried[1]!.at - retried[0]!.at).toBeGreaterThanOrEqual(8_500 + 1_500); // cut, then the ≈2 s backoff
  }, 120_000);
});
