import { createHmac, randomBytes } from "node:crypto";
import { itemHref, OWNED_WEBHOOK_FORMATS, type WebhookFormat, type WorkGraphEvent } from "@work-graph/contract";

/**
 * The webhooks an integration owns: `slack_app`, the Slack app's (server/integrations/slack);
 * `github`, GitHub progress out's (server/integrations/github/progress.ts). Each is created from
 * its integration's settings, not through webhooks.create, and its deliveries are made by that
 * integration (DispatcherOptions.owned) instead of a signed POST.
 */
export type OwnedWebhookFormat = (typeof OWNED_WEBHOOK_FORMATS)[number];

export const isOwnedWebhookFormat = (format: WebhookFormat): format is OwnedWebhookFormat => (OWNED_WEBHOOK_FORMATS as readonly string[]).includes(format);

export const TEST_EVENT_TYPE = "webhook.test";

/** `whsec_` + standard base64 of 32 random bytes: the Standard Webhooks secret format. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** `x-work-graph-signature`: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">. */
export function signatureHeader(secret: string, unixSeconds: number, rawBody: string): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${rawBody}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * The Standard Webhooks headers (standardwebhooks.com): `webhook-signature` is
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">` keyed with the bytes of the
 * secret's base64 part. Node's base64 decoder also reads the base64url secrets made before
 * v3, so their signatures stay consistent (though strict verifiers refuse that alphabet).
 */
export function standardWebhookHeaders(secret: string, deliveryId: string, unixSeconds: number, rawBody: string) {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const mac = createHmac("sha256", key).update(`${deliveryId}.${unixSeconds}.${rawBody}`).digest("base64");
  return { "webhook-id": deliveryId, "webhook-timestamp": String(unixSeconds), "webhook-signature": `v1,${mac}` };
}

export interface ItemSummary {
  id: string;
  title: string;
  stage: string;
}

/** What one delivery says: the event (or a test), its item as of the attempt, and a question or answer for attention events. */
export interface DeliveryContent {
  event: WorkGraphEvent;
  workItem: ItemSummary | null;
  question: string | null;
}

export function itemUrl(publicUrl: string, workItemId: string): string {
  return `${publicUrl.replace(/\/+$/, "")}${itemHref(workItemId)}`;
}

/** Body of the `json` format: the Event plus `workItem` and the item's dashboard `url`. */
export function jsonBody(content: DeliveryContent, publicUrl: string) {
  const { event, workItem } = content;
  return {
    ...event,
    workItem,
    url: event.workItemId ? itemUrl(publicUrl, event.workItemId) : publicUrl,
  };
}

// Slack "mrkdwn" reserves &, < and > (links are <url|label>).
const slackEscape = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const quoted = (text: string) => `“${slackEscape(clip(text.replace(/\s+/g, " ").trim(), 200))}”`;

/** One line a person understands at a glance: who, does what, about which item (linked). */
export function slackText(content: DeliveryContent, publicUrl: string): string {
  const { event, workItem, question } = content;
  if (event.type === TEST_EVENT_TYPE) return `Work Graph test message from ${slackEscape(event.actor)}: this webhook works.`;
  const link = `<${itemUrl(publicUrl, event.workItemId)}|${slackEscape(clip(workItem?.title ?? event.workItemId, 120)).replaceAll("|", "¦")}>`;
  const who = slackEscape(event.actorName ?? event.actor);
  const data = event.data as Record<string, unknown>;
  switch (event.type) {
    case "attention.requested":
      return `:raising_hand: ${who} asks about ${link}${data.blocking === false ? "" : " (blocking)"}: ${question ? quoted(question) : "see the item"}`;
    case "attention.resolved":
      return `:white_check_mark: ${who} answered on ${link}: ${typeof data.resolution === "string" ? quoted(data.resolution) : "resolved"}`;
    case "lease.claimed":
      return `${who} claimed ${link}${event.epoch ? ` (epoch ${event.epoch})` : ""}`;
    case "lease.ended":
      return `${who}'s lease on ${link} ended: ${slackEscape(String(data.outcome ?? "ended"))}`;
    case "work_item.created":
      return `${who} created ${link}`;
    case "work_item.status_changed":
      return `${who} set ${link} to ${slackEscape(String(data.to ?? data.status ?? "a new status"))}`;
    default:
      return `${who}: ${slackEscape(event.type)} on ${link}`;
  }
}

export function renderBody(format: WebhookFormat, content: DeliveryContent, publicUrl: string): string {
  return JSON.stringify(format === "slack" ? { text: slackText(content, publicUrl) } : jsonBody(content, publicUrl));
}
