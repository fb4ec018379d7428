import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect } from "vitest";
import { startWebhookDispatcher } from "../../server/integrations/webhooks/dispatcher";
import { signatureIsValid, webhookTest } from "./support";

/*
 * docs/api.md "Every language": deliveries carry the Standard Webhooks headers, so the
 * `standardwebhooks` library verifies a real delivery with the webhook's secret, next to
 * the v2 `x-work-graph-*` headers.
 */

const it = webhookTest.extend("dispatcher", { scope: "file", auto: true }, ({ database, receiver: _ }, { onCleanup }) => {
  const dispatcher = startWebhookDispatcher(database.db, { publicUrl: "https://wg.example.com" });
  onCleanup(() => dispatcher.stop());
  return dispatcher;
});

describe("Standard Webhooks", () => {
  it("a real delivery verifies with the standardwebhooks package, and fails with another secret or a changed body", async ({ people, receiver, sql }) => {
    const hook = await people.admin.webhooks.create({ url: receiver.on("/standard", () => ({ status: 204 })), events: ["work_item.created"] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await people.operator.workItems.create({ id: "standard-1", title: "Verify me" });
    await expect.poll(() => receiver.at("/standard").length, { timeout: 10_000 }).toBeGreaterThan(0);
    const [request] = receiver.at("/standard");
    const headers = request!.headers as Record<string, string>;

    const verified = new Webhook(hook.secret).verify(request!.body, headers) as { workItemId: string; type: string };
    expect(verified).toMatchObject({ workItemId: "standard-1", type: "work_item.created" });

    const [delivery] = await people.admin.webhooks.deliveries({ webhookId: hook.id });
    expect(headers["webhook-id"]).toBe(delivery!.id);
    expect(headers["webhook-id"]).toBe(headers["x-work-graph-delivery"]);
    const { rows: [now] } = await sql.query<{ s: number }>("SELECT extract(epoch FROM work_graph_clock())::int AS s");
    expect(Math.abs(Number(headers["webhook-timestamp"]) - now!.s)).toBeLessThan(60);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // The v2 signature stays.
    expect(signatureIsValid(hook.secret, headers["x-work-graph-signature"], request!.body)).toBe(true);

    const other = await people.admin.webhooks.create({ url: receiver.on("/other", () => ({ status: 204 })), events: ["nothing.matches"] });
    expect(() => new Webhook(other.secret).verify(request!.body, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(hook.secret).verify(request!.body.replace("Verify me", "Verify you"), headers)).toThrow(WebhookVerificationError);
  });
});
