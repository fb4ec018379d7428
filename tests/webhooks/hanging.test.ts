import { describe, expect, vi } from "vitest";
import { startWebhookDispatcher } from "../../server/integrations/webhooks/dispatcher";
import { webhookTest } from "./support";

const it = webhookTest.extend("dispatcher", { scope: "file", auto: true }, ({ database, receiver: _ }, { onCleanup }) => {
  const errors: unknown[] = [];
  // The production defaults: 10 s timeout, 64 attempts per instance, 16 per webhook.
  const dispatcher = startWebhookDispatcher(database.db, { publicUrl: "http://localhost:3000", onError: (error) => errors.push(error) });
  onCleanup(async () => {
    await dispatcher.stop();
    expect(errors).toEqual([]);
  });
  return dispatcher;
});

describe("a receiver that hangs", () => {
  it("is cut at 10 s and retried, while other webhooks are delivered within 3 s", async ({ people, receiver }) => {
    const { admin, operator } = people;
    // Every first attempt hangs (holding all of this webhook's slots); later ones answer.
    const slow = await admin.webhooks.create({
      url: receiver.on("/hang", (n) => (n < 18 ? "hang" : { status: 200 })),
      events: ["work_item.created"],
    });
    for (let i = 0; i < 18; i++) await operator.workItems.create({ id: `hang-${i}`, title: `hanging ${i}` });
    await expect.poll(() => receiver.at("/hang").length, { timeout: 10_000 }).toBeGreaterThanOrEqual(16);

    const fast = await admin.webhooks.create({ url: receiver.on("/fast", () => ({ status: 200 })), events: ["work_item.priority_changed"] });
    const committedAt = Date.now();
    await operator.workItems.setPriority({ id: "hang-0", priority: 5 });
    await expect.poll(() => receiver.at("/fast").length, { timeout: 3_000 }).toBe(1);
    const [fastRequest] = receiver.at("/fast");
    expect(fastRequest!.at - committedAt).toBeLessThan(3_000);
    expect(receiver.at("/hang").length).toBe(16); // its 16 slots still hang, the other 2 wait
    // The receiver sees the request before the dispatcher records its answer, so wait for the record.
    await expect
      .poll(async () => (await admin.webhooks.deliveries({ webhookId: fast.id }))[0]?.status, { timeout: 3_000 })
      .toBe("delivered");

    const firstHang = receiver.at("/hang")[0]!;
    const cut = await vi.waitFor(
      async () => {
        const delivery = (await admin.webhooks.deliveries({ webhookId: slow.id })).find((d) => d.id === firstHang.headers["x-work-graph-delivery"]);
        expect(delivery?.error, "the first attempt to be cut").toEqual(expect.any(String));
        return delivery;
      },
      { timeout: 30_000, interval: 25 },
    );
    // The dispatcher's 10 s timer starts just before the request reaches us; on a loaded machine
    // it reaches us up to a second or so later, so the bounds below leave that much room.
    expect(Date.now() - firstHang.at).toBeGreaterThanOrEqual(8_500);
    expect(cut).toMatchObject({ attempts: 1, status: "pending", responseStatus: null, error: "no answer within 10 s" });

    await expect
      .poll(async () => (await admin.webhooks.deliveries({ webhookId: slow.id })).map((d) => d.status), { timeout: 60_000 })
      .toEqual(Array(18).fill("delivered"));
    const retried = receiver.at("/hang").filter((r) => r.headers["x-work-graph-delivery"] === firstHang.headers["x-work-graph-delivery"]);
    expect(retried.length).toBe(2);
    expect(retried[1]!.at - retried[0]!.at).toBeGreaterThanOrEqual(8_500 + 1_500); // cut, then the ≈2 s backoff
  }, 120_000);
});
