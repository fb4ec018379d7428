import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import { notFound } from "../errors";
import { Prisma } from "../generated/prisma/client";

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  format: "json" | "slack";
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

export const WEBHOOK_COLUMNS = Prisma.sql`id::text, url, events, format, label, created_at AS "createdAt",
    last_delivered_at AS "lastDeliveredAt", failing, last_error AS "lastError"`;

type WebhookRow = Omit<Webhook, "createdAt" | "lastDeliveredAt"> & { createdAt: Date; lastDeliveredAt: Date | null };

export function toWebhook(row: WebhookRow): Webhook {
  return { ...row, createdAt: row.createdAt.toISOString(), lastDeliveredAt: iso(row.lastDeliveredAt) };
}

export const DELIVERY_COLUMNS = Prisma.sql`id::text, webhook_id::text AS "webhookId", event_sequence AS "eventSequence",
    event_type AS "eventType", attempts, status, response_status AS "responseStatus", response_body AS "responseBody",
    error, created_at AS "createdAt", delivered_at AS "deliveredAt", next_attempt_at AS "nextAttemptAt"`;

type DeliveryRow = Omit<Delivery, "eventSequence" | "createdAt" | "deliveredAt" | "nextAttemptAt"> & {
  eventSequence: bigint;
  createdAt: Date;
  deliveredAt: Date | null;
  nextAttemptAt: Date | null;
};

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
  const rows = await db.$queryRaw<WebhookRow[]>`
    SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE deleted_at IS NULL ORDER BY created_at, id`;
  return rows.map(toWebhook);
}

/** A live webhook's deliveries, newest first. */
export async function listDeliveries(db: Db | Tx, input: { webhookId: string; limit: number }): Promise<Delivery[]> {
  const [webhook] = await db.$queryRaw<{ id: string }[]>`
    SELECT id::text FROM webhooks WHERE id = ${input.webhookId}::uuid AND deleted_at IS NULL`;
  if (!webhook) throw notFound("webhook", input.webhookId);
  const rows = await db.$queryRaw<DeliveryRow[]>`
    SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
     WHERE webhook_id = ${input.webhookId}::uuid
     ORDER BY created_at DESC, event_sequence DESC LIMIT ${input.limit}`;
  return rows.map(toDelivery);
}
