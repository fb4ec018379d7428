import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../../server/db";
import { claimDeliveries } from "../../server/webhooks/claim";
import { startWebhookDispatcher } from "../../server/webhooks/dispatcher";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { actors } from "../support/fixtures";
import { pause, startReceiver, waitFor } from "./support";

let database: TestDatabase;
let sql: pg.Client;
let secondInstance: Db;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  database = await createTestDatabase();
  sql = await database.connect();
  secondInstance = createDb(database.url, { poolSize: 5 });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await secondInstance.$disconnect();
  await database.close();
});

describe("webhook dispatchers of several app instances", () => {
  it("two instances deliver 200 events to a healthy receiver exactly once each", async () => {
    const { admin, operator } = await actors(database);
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
      await waitFor("200 deliveries", () => receiver.at("/many").length >= 200, 60_000);
      await pause(1_500); // a few more polling rounds of both instances: a double send would show now
    } finally {
      await Promise.all(dispatchers.map((d) => d.stop()));
    }
    expect(errors).toEqual([]);
    const requests = receiver.at("/many");
    expect(requests.length).toBe(200);
    const deliveryIds = new Set(requests.map((r) => r.headers["x-work-graph-delivery"]));
    const sequences = new Set(requests.map((r) => (JSON.parse(r.body) as { sequence: number }).sequence));
    expect(deliveryIds.size).toBe(200);
    expect(sequences.size).toBe(200);
    const { rows } = await sql.query<{ status: string; attempts: number; n: number }>(
      "SELECT status, attempts, count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 GROUP BY 1, 2",
      [hook.id],
    );
    expect(rows).toEqual([{ status: "delivered", attempts: 1, n: 200 }]);
  });

  it("retries a delivery whose instance crashed mid-attempt once the attempt lease runs out, under the same id", async () => {
    const { admin, operator } = await actors(database);
    for (const other of await admin.webhooks.list()) await admin.webhooks.delete({ id: other.id });
    const hook = await admin.webhooks.create({ url: receiver.on("/crash", () => ({ status: 200 })), events: ["work_item.created"] });
    await operator.workItems.create({ id: "crash-1", title: "claimed by an instance that dies" });
    // The crashed instance: it claimed the delivery and never sent or recorded anything.
    const { claimed } = await claimDeliveries(database.db, { max: 10, perWebhook: 4, busy: new Map() });
    expect(claimed.map((d) => d.webhookId)).toEqual([hook.id]);
    const survivor = startWebhookDispatcher(secondInstance, { publicUrl: "http://localhost:3000" });
    try {
      await pause(1_500); // three polls: the leased delivery is not due
      expect(receiver.at("/crash")).toEqual([]);
      // Stand-in for waiting out the 60 s attempt lease.
      await sql.query("UPDATE webhook_deliveries SET next_attempt_at = clock_timestamp() WHERE id = $1", [claimed[0]!.id]);
      await waitFor("the retry", () => receiver.at("/crash").length === 1);
      await waitFor("delivered", async () => (await admin.webhooks.deliveries({ webhookId: hook.id }))[0]?.status === "delivered");
    } finally {
      await survivor.stop();
    }
    expect(receiver.at("/crash")[0]!.headers["x-work-graph-delivery"]).toBe(claimed[0]!.id);
    expect((await admin.webhooks.deliveries({ webhookId: hook.id }))[0]!.attempts).toBe(2);
  });
});
