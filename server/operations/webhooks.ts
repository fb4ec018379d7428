import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { notFound, WorkGraphError } from "../errors";
import { DELIVERY_COLUMNS, toDelivery, toWebhook, WEBHOOK_COLUMNS, type Delivery, type Webhook } from "../queries/webhooks";
import { newWebhookSecret, TEST_EVENT_TYPE } from "../webhooks/payload";
import { encryptSecret } from "../webhooks/secret-box";

/** More would make every event's transaction pay for matching them; nobody needs that many. */
export const MAX_WEBHOOKS = 100;

export interface CreateWebhookInput {
  url: string;
  events: string[];
  format: "json" | "slack";
  label?: string;
}

/** Creates a webhook with a fresh signing secret, returned this once (stored encrypted, see secret-box.ts). */
export async function createWebhook(db: Db, input: CreateWebhookInput): Promise<Webhook & { secret: string }> {
  const secret = newWebhookSecret();
  const ciphertext = encryptSecret(secret);
  const [row] = await db.$queryRaw<Parameters<typeof toWebhook>[0][]>`
    INSERT INTO webhooks (url, events, format, label, secret_ciphertext)
    SELECT ${input.url}, ${[...new Set(input.events)]}::text[], ${input.format}, ${input.label ?? null}, ${ciphertext}
     WHERE (SELECT count(*) FROM webhooks WHERE deleted_at IS NULL) < ${MAX_WEBHOOKS}
    RETURNING ${WEBHOOK_COLUMNS}`;
  if (!row) throw new WorkGraphError("VALIDATION", `at most ${MAX_WEBHOOKS} webhooks: delete one first`);
  return { ...toWebhook(row), secret };
}

/**
 * Deletes a webhook: no new deliveries are queued for it, and its pending ones are marked
 * failed. Marking them waits for any claim that holds them, so once this returns no instance
 * can start another attempt; an attempt claimed before may still finish.
 */
export async function deleteWebhook(db: Db, id: string): Promise<{ id: string }> {
  return inTransaction(db, async (tx) => {
    const [row] = await tx.$queryRaw<{ id: string }[]>`
      UPDATE webhooks SET deleted_at = clock_timestamp() WHERE id = ${id}::uuid AND deleted_at IS NULL RETURNING id::text`;
    if (!row) throw notFound("webhook", id);
    await tx.$executeRaw`
      UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, error = 'webhook deleted'
       WHERE webhook_id = ${id}::uuid AND status = 'pending'`;
    return { id: row.id };
  });
}

/** Queues a `webhook.test` delivery (no event behind it, eventSequence 0) through the normal outbox. */
export async function queueTestDelivery(db: Db, id: string): Promise<Delivery> {
  const [row] = await db.$queryRaw<Parameters<typeof toDelivery>[0][]>`
    INSERT INTO webhook_deliveries (webhook_id, event_sequence, event_type, next_attempt_at)
    SELECT id, 0, ${TEST_EVENT_TYPE}, clock_timestamp() FROM webhooks WHERE id = ${id}::uuid AND deleted_at IS NULL
    RETURNING ${DELIVERY_COLUMNS}`;
  if (!row) throw notFound("webhook", id);
  return toDelivery(row);
}
