import type { Delivery, Webhook } from "@work-graph/contract";
import type { Db } from "../../db";
import type { Tx } from "../../database/transaction";
import { notFound } from "../../errors";
import { isLiveWebhook, selectDeliveries, selectLiveWebhooks, type DeliveryRow, type WebhookRow } from "./statements";

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
