import { Prisma } from "../../generated/prisma/client";
import type { Db } from "../../db";
import type { Tx } from "../../database/transaction";
import { STAGE_SQL } from "../../domain/readiness";
import { actorNameOf } from "../../domain/views";
import type { WebhookFormat } from "@work-graph/contract";
import type { RetryPolicy } from "./retry";

/** An attempt in flight holds its delivery this long; a crashed instance's delivery is then due again. */
const ATTEMPT_LEASE_SECONDS = 60;
const CANDIDATES_PER_CLAIM = 100;

/*
 * Webhooks and their delivery outbox: the admin's statements, the reads, and the dispatcher's
 * two (claimDueDeliveries, recordAttempts).
 */

const WEBHOOK_COLUMNS = Prisma.sql`id::text, url, events, format, label, created_at AS "createdAt",
    last_delivered_at AS "lastDeliveredAt", failing, last_error AS "lastError"`;

export interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  format: WebhookFormat;
  label: string | null;
  createdAt: Date;
  lastDeliveredAt: Date | null;
  failing: boolean;
  lastError: string | null;
}

const DELIVERY_COLUMNS = Prisma.sql`id::text, webhook_id::text AS "webhookId", event_sequence AS "eventSequence",
    event_type AS "eventType", attempts, status, response_status AS "responseStatus", response_body AS "responseBody",
    error, created_at AS "createdAt", delivered_at AS "deliveredAt", next_attempt_at AS "nextAttemptAt"`;

export interface DeliveryRow {
  id: string;
  webhookId: string;
  eventSequence: bigint;
  eventType: string;
  attempts: number;
  status: "pending" | "delivered" | "failed";
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
  nextAttemptAt: Date | null;
}

/** Inserts a webhook unless `max` live ones exist already (undefined then). */
export async function insertWebhookBelowLimit(
  db: Db,
  webhook: { url: string; events: string[]; format: WebhookFormat; label: string | null; projectId: string | null; secretCiphertext: string },
  max: number,
): Promise<WebhookRow | undefined> {
  const [row] = await db.$queryRaw<WebhookRow[]>`
    INSERT INTO webhooks (url, events, format, label, project_id, secret_ciphertext)
    SELECT ${webhook.url}, ${webhook.events}::text[], ${webhook.format}, ${webhook.label}, ${webhook.projectId}, ${webhook.secretCiphertext}
     WHERE (SELECT count(*) FROM webhooks WHERE deleted_at IS NULL) < ${max}
    RETURNING ${WEBHOOK_COLUMNS}`;
  return row;
}

/** Marks a live webhook deleted; false when there is no live webhook `id`. */
export async function markWebhookDeleted(tx: Tx, id: string): Promise<boolean> {
  const [row] = await tx.$queryRaw<{ id: string }[]>`
    UPDATE webhooks SET deleted_at = work_graph_clock() WHERE id = ${id}::uuid AND deleted_at IS NULL RETURNING id::text`;
  return row !== undefined;
}

/** Marks the webhook's pending deliveries failed (waiting for any claim that holds them). */
export async function failPendingDeliveries(tx: Tx, webhookId: string): Promise<void> {
  await tx.$executeRaw`
    UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, error = 'webhook deleted'
     WHERE webhook_id = ${webhookId}::uuid AND status = 'pending'`;
}

/** Queues a delivery of `eventType` without an event behind it (eventSequence 0), due now; undefined when the webhook is not live. */
export async function insertTestDelivery(db: Db, webhookId: string, eventType: string): Promise<DeliveryRow | undefined> {
  const [row] = await db.$queryRaw<DeliveryRow[]>`
    INSERT INTO webhook_deliveries (webhook_id, event_sequence, event_type, next_attempt_at)
    SELECT id, 0, ${eventType}, work_graph_clock() FROM webhooks WHERE id = ${webhookId}::uuid AND deleted_at IS NULL
    RETURNING ${DELIVERY_COLUMNS}`;
  return row;
}

/** Live (not deleted) webhooks, oldest first. */
export async function selectLiveWebhooks(db: Db | Tx): Promise<WebhookRow[]> {
  return db.$queryRaw<WebhookRow[]>`
    SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE deleted_at IS NULL ORDER BY created_at, id`;
}

export async function isLiveWebhook(db: Db | Tx, id: string): Promise<boolean> {
  const [webhook] = await db.$queryRaw<{ id: string }[]>`
    SELECT id::text FROM webhooks WHERE id = ${id}::uuid AND deleted_at IS NULL`;
  return webhook !== undefined;
}

/** A webhook's latest `limit` deliveries, newest first. */
export async function selectDeliveries(db: Db | Tx, webhookId: string, limit: number): Promise<DeliveryRow[]> {
  return db.$queryRaw<DeliveryRow[]>`
    SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
     WHERE webhook_id = ${webhookId}::uuid
     ORDER BY created_at DESC, event_sequence DESC LIMIT ${limit}`;
}

/** A claimed delivery with what its body needs: the webhook, the event, its item and question. */
export interface ClaimedRow {
  id: string;
  webhookId: string;
  attempts: number;
  url: string;
  format: WebhookFormat;
  secretCiphertext: string;
  unixSeconds: number;
  deliveryCreatedAt: Date;
  sequence: bigint | null;
  workItemId: string | null;
  type: string;
  actor: string | null;
  actorName: string | null;
  leaseId: string | null;
  epoch: number | null;
  data: Record<string, unknown> | null;
  createdAt: Date | null;
  itemTitle: string | null;
  itemStage: string | null;
  question: string | null;
}

/**
 * Claims due deliveries for this instance in one statement (its own short transaction):
 * candidates are locked with FOR UPDATE SKIP LOCKED (another instance's claim never waits for
 * or repeats ours), at most `perWebhook` minus this instance's attempts in flight are taken per
 * webhook, and each taken one gets attempts + 1 and an attempt lease in next_attempt_at.
 * Deliveries of deleted webhooks found on the way are marked failed. `capped` says some due
 * candidates were left for a webhook that had no free slot (on every row).
 */
export async function claimDueDeliveries(
  db: Db,
  input: { max: number; perWebhook: number; busy: ReadonlyMap<string, number> },
): Promise<(ClaimedRow & { capped: boolean })[]> {
  const busyIds = [...input.busy.keys()];
  const busyCounts = busyIds.map((id) => input.busy.get(id)!);
  return db.$queryRaw<(ClaimedRow & { capped: boolean })[]>`
    WITH busy AS (
      SELECT * FROM unnest(${busyIds}::uuid[], ${busyCounts}::int[]) AS b(webhook_id, in_flight)
    ), candidates AS (
      SELECT d.id, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
       WHERE d.status = 'pending' AND d.next_attempt_at <= work_graph_clock()
         AND d.webhook_id NOT IN (SELECT webhook_id FROM busy WHERE in_flight >= ${input.perWebhook})
       ORDER BY d.next_attempt_at
       LIMIT ${Math.min(CANDIDATES_PER_CLAIM, Math.max(input.max * 4, 10))}
         FOR UPDATE SKIP LOCKED
    ), ranked AS (
      SELECT c.id, c.next_attempt_at, h.deleted_at IS NOT NULL AS deleted,
             row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.next_attempt_at) + COALESCE(b.in_flight, 0) AS slot
        FROM candidates c JOIN webhooks h ON h.id = c.webhook_id LEFT JOIN busy b ON b.webhook_id = c.webhook_id
    ), taken AS (
      SELECT id FROM ranked WHERE NOT deleted AND slot <= ${input.perWebhook} ORDER BY next_attempt_at LIMIT ${input.max}
    ), orphaned AS (
      UPDATE webhook_deliveries d SET status = 'failed', next_attempt_at = NULL, error = 'webhook deleted'
        FROM ranked r WHERE r.deleted AND d.id = r.id
    ), claimed AS (
      UPDATE webhook_deliveries d
         SET attempts = d.attempts + 1,
             next_attempt_at = work_graph_clock() + make_interval(secs => ${ATTEMPT_LEASE_SECONDS})
        FROM taken WHERE d.id = taken.id
      RETURNING d.id, d.webhook_id, d.attempts, d.event_sequence, d.event_type, d.created_at
    )
    SELECT c.id::text, c.webhook_id::text AS "webhookId", c.attempts, h.url, h.format,
           h.secret_ciphertext AS "secretCiphertext", c.created_at AS "deliveryCreatedAt",
           floor(extract(epoch FROM work_graph_clock()))::int AS "unixSeconds",
           e.sequence, e.work_item_id AS "workItemId", c.event_type AS type, e.actor, ${actorNameOf(Prisma.sql`e.actor`)} AS "actorName",
           e.lease_id::text AS "leaseId", e.epoch, e.data, e.created_at AS "createdAt",
           w.title AS "itemTitle", CASE WHEN w.id IS NULL THEN NULL ELSE ${STAGE_SQL} END AS "itemStage",
           a.question,
           EXISTS (SELECT 1 FROM ranked WHERE NOT deleted AND slot > ${input.perWebhook}) AS capped
      FROM claimed c
      JOIN webhooks h ON h.id = c.webhook_id
      LEFT JOIN events e ON e.sequence = c.event_sequence
      LEFT JOIN work_items w ON w.id = e.work_item_id
      LEFT JOIN attention_requests a ON a.id = CASE
             WHEN e.type = 'attention.requested' AND e.data->>'requestId' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
             THEN (e.data->>'requestId')::uuid END`;
}

/** How a delivery attempt went (send.ts), as recorded. */
export interface AttemptResult {
  ok: boolean;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}

/**
 * Records attempts' outcomes in one statement (one commit for a whole batch), each only if no
 * later attempt of its delivery has started. A failure is retried on `retry`'s schedule
 * (firstDelaySeconds · 2^(attempt−1), at most maxDelaySeconds apart, until giveUpAfterSeconds
 * after the delivery was created; then it is `failed`). Each webhook's health follows its
 * latest recorded attempt.
 */
export async function recordAttempts(
  db: Db,
  results: { delivery: { id: string; attempt: number }; result: AttemptResult }[],
  retry: RetryPolicy,
): Promise<void> {
  if (results.length === 0) return;
  const column = <T>(pick: (entry: (typeof results)[number]) => T) => results.map(pick);
  const giveUpAfter = Prisma.sql`make_interval(secs => ${retry.giveUpAfterSeconds}::float8)`;
  await db.$executeRaw`
    WITH r AS (
      SELECT * FROM unnest(${column((e) => e.delivery.id)}::uuid[], ${column((e) => e.delivery.attempt)}::int[],
                           ${column((e) => e.result.ok)}::boolean[], ${column((e) => e.result.responseStatus)}::int[],
                           ${column((e) => e.result.responseBody)}::text[], ${column((e) => e.result.error)}::text[])
             WITH ORDINALITY AS r(id, attempt, ok, response_status, response_body, error, n)
    ), recorded AS (
      UPDATE webhook_deliveries d
         SET status = CASE WHEN r.ok THEN 'delivered'
                           WHEN work_graph_clock() >= d.created_at + ${giveUpAfter} THEN 'failed' ELSE 'pending' END,
             delivered_at = CASE WHEN r.ok THEN work_graph_clock() END,
             next_attempt_at = CASE WHEN r.ok OR work_graph_clock() >= d.created_at + ${giveUpAfter} THEN NULL
                 ELSE LEAST(work_graph_clock() + make_interval(secs => LEAST(${retry.firstDelaySeconds}::float8 * power(2, LEAST(d.attempts - 1, 20)), ${retry.maxDelaySeconds}::float8)),
                            d.created_at + ${giveUpAfter}) END,
             response_status = r.response_status, response_body = r.response_body, error = r.error
        FROM r
       WHERE d.id = r.id AND d.attempts = r.attempt
      RETURNING d.webhook_id, d.delivered_at, r.ok, r.error, r.n
    ), latest AS (
      SELECT DISTINCT ON (webhook_id) webhook_id, ok, error,
             max(delivered_at) OVER (PARTITION BY webhook_id) AS delivered_at
        FROM recorded ORDER BY webhook_id, n DESC
    )
    UPDATE webhooks h
       SET last_delivered_at = GREATEST(h.last_delivered_at, latest.delivered_at),
           failing = NOT latest.ok, last_error = CASE WHEN latest.ok THEN NULL ELSE latest.error END
      FROM latest WHERE h.id = latest.webhook_id`;
}
