import { describe, expect } from "vitest";
import { claimDeliveries } from "../../server/integrations/webhooks/claim";
import { startWebhookDispatcher } from "../../server/integrations/webhooks/dispatcher";
import { deliveryRounds, webhookTest } from "./support";
import { testInstance } from "../support/database";

const it = webhookTest.extend("secondInstance", { scope: "file" }, ({ database }, { onCleanup }) => {
  const instance = testInstance(database.url, { poolSize: 5 });
  onCleanup(() => instance.close());
  return instance.db;
});

describe("webhook dispatchers of several app instances", () => {
  it("two instances deliver 200 events to a healthy receiver exactly once each", async ({ database, sql, people, receiver, secondInstance }) => {
    const { admin, operator } = people;
    const hook = await admin.webhooks.create({ url: receiver.on("/many", () => ({ status: 200 })), events: ["work_item.created"] });
    const errors: unknown[] = [];
    const options = { publicUrl: "http://localhost:3000", onError: (error: unknown) => errors.push(error) };
    const dispatchers = [startWebhookDispatcher(database.db, options), startWebhookDispatcher(secondInstance, options)];
    try {
      // Events arrive in bursts from 20 concurrent writers while both dispatchers are claiming.
      await Promise.all(
        Array.from({ length: 20 }, async (_, writer) => {
          for (let i = 0; i < 10; i++) await operator.workItems.create({ id: `many-${writer}-${i}`, title: `item ${writer}/${i}` });
        }),
      );
      await expect
        .poll(async () => (await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'delivered'", [hook.id])).rows[0]!.n, { timeout: 60_000 })
        .toBe(200);
    } finally {
      // stop() waits for every attempt in flight: a second send of any delivery has reached the receiver (or been counted as an attempt) by now.
      await Promise.all(dispatchers.map((d) => d.stop()));
    }
    expect(errors).toEqual([]);
    const requests = receiver.at("/many");
    expect(requests.length).toBe(200);
    const deliveryIds = new Set(requests.map((r) => r.headers["x-work-graph-delivery"]));
    const sequences = new Set(requests.map((r) => (JSON.parse(r.body) as { sequence: number }).sequence));
    expect(deliveryIds.size).toBe(200);
    expect(sequences.size).toBe(200);
    // A delivery claimed twice (by both instances) would show as two attempts.
    const { rows } = await sql.query<{ status: string; attempts: number; n: number }>(
      "SELECT status, attempts, count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 GROUP BY 1, 2",
      [hook.id],
    );
    expect(rows).toEqual([{ status: "delivered", attempts: 1, n: 200 }]);
  });

  it("retries a delivery whose instance crashed mid-attempt once the attempt lease runs out, under the same id", async ({ database, sql, people, receiver, secondInstance }) => {
    const { admin, operator } = people;
    for (const other of await admin.webhooks.list()) await admin.webhooks.delete({ id: other.id });
    const afterADeliveryRound = deliveryRounds(receiver, admin);
    const hook = await admin.webhooks.create({ url: receiver.on("/crash", () => ({ status: 200 })), events: ["work_item.created"] });
    await operator.workItems.create({ id: "crash-1", title: "claimed by an instance that dies" });
    // The crashed instance: it claimed the delivery and never sent or recorded anything.
    const { claimed } = await claimDeliveries(database.db, { max: 10, perWebhook: 4, busy: new Map() });
    expect(claimed.map((d) => d.webhookId)).toEqual([hook.id]);
    const survivor = startWebhookDispatcher(secondInstance, { publicUrl: "http://localhost:3000" });
    try {
      await afterADeliveryRound(); // the survivor has claimed what was due: the leased delivery is not
      expect(receiver.at("/crash")).toEqual([]);
      // Stand-in for waiting out the 60 s attempt lease.
      await sql.query("UPDATE webhook_deliveries SET next_attempt_at = work_graph_clock() WHERE id = $1", [claimed[0]!.id]);
      await expect.poll(() => receiver.at("/crash").length).toBe(1);
      await expect.poll(async () => (await admin.webhooks.deliveries({ webhookId: hook.id }))[0]?.status).toBe("delivered");
    } finally {
      await survivor.stop();
    }
    expect(receiver.at("/crash")[0]!.headers["x-work-graph-delivery"]).toBe(claimed[0]!.id);
    expect((await admin.webhooks.deliveries({ webhookId: hook.id }))[0]!.attempts).toBe(2);
  });
});
