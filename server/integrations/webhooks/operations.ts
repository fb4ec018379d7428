import type { Db } from "../../db";
import { inTransaction } from "../../database/transaction";
import { notFound, WorkGraphError } from "../../errors";
import type { Delivery, Webhook } from "@work-graph/contract";
import { toDelivery, toWebhook } from "./queries";
import { failPendingDeliveries, insertTestDelivery, insertWebhookBelowLimit, markWebhookDeleted } from "./statements";
import { newWebhookSecret, TEST_EVENT_TYPE } from "./payload";
import { encryptSecret } from "./secret-box";
import { firstUnknownProject } from "../../sql/projects";

/** More would make every event's transaction pay for matching them; nobody needs that many. */
export const MAX_WEBHOOKS = 100;

export interface CreateWebhookInput {
  url: string;
  events: string[];
  format: "json" | "slack";
  label?: string;
  projectId?: string;
}

/** Creates a webhook with a fresh signing secret, returned this once (stored encrypted, see secret-box.ts). */
export async function createWebhook(db: Db, input: CreateWebhookInput): Promise<Webhook & { secret: string }> {
  if (input.projectId !== undefined && (await firstUnknownProject(db, [input.projectId])) !== undefined) throw notFound("project", input.projectId);
  const secret = newWebhookSecret();
  const row = await insertWebhookBelowLimit(
    db,
    { url: input.url, events: [...new Set(input.events)], format: input.format, label: input.label ?? null, projectId: input.projectId ?? null, secretCiphertext: encryptSecret(secret) },
    MAX_WEBHOOKS,
  );
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
    if (!(await markWebhookDeleted(tx, id))) throw notFound("webhook", id);
    await failPendingDeliveries(tx, id);
    return { id };
  });
}

/** Queues a `webhook.test` delivery (no event behind it, eventSequence 0) through the normal outbox. */
export async function queueTestDelivery(db: Db, id: string): Promise<Delivery> {
  const row = await insertTestDelivery(db, id, TEST_EVENT_TYPE);
  if (!row) throw notFound("webhook", id);
  return toDelivery(row);
}
