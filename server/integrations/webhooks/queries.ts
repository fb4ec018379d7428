import type { Db } from "../../db";
import type { Tx } from "../../database/transaction";
import { notFound } from "../../errors";
import type { WebhookFormat } from "./payload";
import { isLiveWebhook, selectDeliveries, selectLiveWebhooks, type DeliveryRow, type WebhookRow } from "./statements";

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  /** `slack_app` and `github`: the Slack app's and GitHub progress out's own webhooks (docs/integrations.md, docs/github.md). */
  format: WebhookFormat;
  label: string | null;
  createdAt: string;
  lastDeliveredAt: string | null;
  failing: boolean;
  lastError: string | null;
}

export interface Delivery {
  id: string;
  webhookId: string;
  eventSequence: number;
  eventType: string;
  attempts: number;
  status: "pending" | "delivered" | "failed";
  responseStatus: number | null;
  /** Addition to API.md's shape: the start of the receiver's answer (at most 1,000 characters). */
  responseBody: string | null;
  error: string | null;
  createdAt: string;
  deliveredAt: string | null;
  nextAttemptAt: string | null;
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export function toWebhook(row: WebhookRow): Webhook {
  return { ...row, createdAt: row.createdAt.toISOString(), lastDeliveredAt: iso(row.lastDeliveredAt) };
}

export function toDelivery(row: DeliveryRow): Delivery {
  return {
    ...row,
    eventSequence: Number(row.eventSequence),
    createdAt: row.createdAt.toISOString(),
    deliveredAt: iso(row.deliveredAt),
    nextAttemptAt: iso(row.nextAttemptAt),
  };
}

/** Live (not deleted) webhooks, oldest first. Their number is capped at creation. */
export async function listWebhooks(db: Db | Tx): Promise<Webhook[]> {
  return (await selectLiveWebhooks(db)).map(toWebhook);
}

/** A live webhook's deliveries, newest first. */
export async function listDeliveries(db: Db | Tx, input: { webhookId: string; limit: number }): Promise<Delivery[]> {
  if (!(await isLiveWebhook(db, input.webhookId))) throw notFound("webhook", input.webhookId);
  return (await selectDeliveries(db, input.webhookId, input.limit)).map(toDelivery);
}
