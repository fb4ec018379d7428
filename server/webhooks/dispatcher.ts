import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { STAGE_SQL, toEvent } from "../domain/views";
import type { WorkGraphEvent } from "../domain/types";
import { renderBody, signatureHeader, TEST_EVENT_TYPE, type WebhookFormat } from "./payload";
import { decryptSecret } from "./secret-box";

/** How long the receiver's answer may take, headers and body together (API.md: 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** An attempt in flight holds its delivery this long; a crashed instance's delivery is then due again. */
const ATTEMPT_LEASE_SECONDS = 60;
/** Kept of the receiver's answer, for the deliveries view. */
const RESPONSE_BODY_CHARS = 1_000;
const CANDIDATES_PER_CLAIM = 100;

export interface DispatcherOptions {
  /** Base of the item links in bodies (WORK_GRAPH_PUBLIC_URL). */
  publicUrl: string;
  /** Attempts in flight in this instance, over all webhooks. */
  concurrency?: number;
  /** Attempts in flight in this instance for one webhook, so a slow receiver cannot take every slot. */
  perWebhook?: number;
  /** How often the due query runs when idle. */
  pollIntervalMs?: number;
  timeoutMs?: number;
  onError?: (error: unknown) => void;
}

interface ClaimedRow {
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
  leaseId: string | null;
  epoch: number | null;
  data: Record<string, unknown> | null;
  createdAt: Date | null;
  itemTitle: string | null;
  itemStage: string | null;
  question: string | null;
}

export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  attempt: number;
  url: string;
  format: WebhookFormat;
  secretCiphertext: string;
  unixSeconds: number;
  event: WorkGraphEvent;
  workItem: { id: string; title: string; stage: string } | null;
  question: string | null;
}

function toClaimed(row: ClaimedRow): ClaimedDelivery {
  const event: WorkGraphEvent =
    row.sequence === null
      ? { sequence: 0, workItemId: "", type: TEST_EVENT_TYPE, actor: "work-graph", leaseId: null, epoch: null, data: {}, createdAt: row.deliveryCreatedAt.toISOString() }
      : toEvent({
          sequence: row.sequence,
          workItemId: row.workItemId!,
          type: row.type,
          actor: row.actor!,
          leaseId: row.leaseId,
          epoch: row.epoch,
          data: row.data ?? {},
          createdAt: row.createdAt!,
        });
  return {
    id: row.id,
    webhookId: row.webhookId,
    attempt: row.attempts,
    url: row.url,
    format: row.format,
    secretCiphertext: row.secretCiphertext,
    unixSeconds: row.unixSeconds,
    event,
    workItem: row.workItemId && row.itemTitle !== null ? { id: row.workItemId, title: row.itemTitle, stage: row.itemStage! } : null,
    question: row.question,
  };
}

/**
 * Claims due deliveries for this instance in one short transaction: candidates are locked
 * with FOR UPDATE SKIP LOCKED (another instance's claim never waits for or repeats ours), at
 * most `perWebhookFree[id]` (default `perWebhook`) per webhook are taken, and each taken one
 * gets attempts + 1 and an attempt lease in next_attempt_at. Deliveries of deleted webhooks
 * found on the way are marked failed. `capped` says some due candidates were left for a
 * webhook that had no free slot.
 */
export async function claimDueDeliveries(
  db: Db,
  input: { max: number; perWebhook: number; busy: ReadonlyMap<string, number> },
): Promise<{ claimed: ClaimedDelivery[]; capped: boolean }> {
  const saturated = [...input.busy].filter(([, count]) => count >= input.perWebhook).map(([id]) => id);
  return inTransaction(db, async (tx) => {
    const candidates = await tx.$queryRaw<{ id: string; webhookId: string; deleted: boolean }[]>`
      SELECT d.id::text, d.webhook_id::text AS "webhookId", h.deleted_at IS NOT NULL AS deleted
        FROM webhook_deliveries d JOIN webhooks h ON h.id = d.webhook_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= clock_timestamp()
         AND d.webhook_id <> ALL(${saturated}::uuid[])
       ORDER BY d.next_attempt_at
       LIMIT ${Math.min(CANDIDATES_PER_CLAIM, Math.max(input.max * 4, 10))}
         FOR UPDATE OF d SKIP LOCKED`;
    const orphaned = candidates.filter((row) => row.deleted).map((row) => row.id);
    if (orphaned.length > 0) {
      await tx.$executeRaw`
        UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, error = 'webhook deleted'
         WHERE id = ANY(${orphaned}::uuid[])`;
    }
    const taken: string[] = [];
    const counts = new Map(input.busy);
    let capped = false;
    for (const row of candidates) {
      if (row.deleted || taken.length >= input.max) continue;
      const count = counts.get(row.webhookId) ?? 0;
      if (count >= input.perWebhook) {
        capped = true;
        continue;
      }
      counts.set(row.webhookId, count + 1);
      taken.push(row.id);
    }
    if (taken.length === 0) return { claimed: [], capped };
    const rows = await tx.$queryRaw<ClaimedRow[]>`
      WITH claimed AS (
        UPDATE webhook_deliveries d
           SET attempts = d.attempts + 1,
               next_attempt_at = clock_timestamp() + make_interval(secs => ${ATTEMPT_LEASE_SECONDS})
         WHERE d.id = ANY(${taken}::uuid[])
        RETURNING d.id, d.webhook_id, d.attempts, d.event_sequence, d.event_type, d.created_at
      )
      SELECT c.id::text, c.webhook_id::text AS "webhookId", c.attempts, h.url, h.format,
             h.secret_ciphertext AS "secretCiphertext", c.created_at AS "deliveryCreatedAt",
             floor(extract(epoch FROM clock_timestamp()))::int AS "unixSeconds",
             e.sequence, e.work_item_id AS "workItemId", c.event_type AS type, e.actor,
             e.lease_id::text AS "leaseId", e.epoch, e.data, e.created_at AS "createdAt",
             w.title AS "itemTitle", CASE WHEN w.id IS NULL THEN NULL ELSE ${STAGE_SQL} END AS "itemStage",
             a.question
        FROM claimed c
        JOIN webhooks h ON h.id = c.webhook_id
        LEFT JOIN events e ON e.sequence = c.event_sequence
        LEFT JOIN work_items w ON w.id = e.work_item_id
        LEFT JOIN attention_requests a ON e.type = 'attention.requested' AND a.id::text = e.data->>'requestId'`;
    return { claimed: rows.map(toClaimed), capped };
  });
}

export interface AttemptResult {
  ok: boolean;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}

/**
 * Records one attempt's outcome, only if no later attempt of the delivery has started. A
 * failure is retried after 2 s · 2^(attempt−1), at most 10 min apart, until 24 h after the
 * delivery was created; then it is `failed`. The webhook's health follows its latest attempt.
 */
export async function recordAttempt(db: Db, delivery: { id: string; attempt: number }, result: AttemptResult): Promise<void> {
  if (result.ok) {
    await db.$executeRaw`
      WITH d AS (
        UPDATE webhook_deliveries
           SET status = 'delivered', delivered_at = clock_timestamp(), next_attempt_at = NULL,
               response_status = ${result.responseStatus}, response_body = ${result.responseBody}, error = NULL
         WHERE id = ${delivery.id}::uuid AND attempts = ${delivery.attempt}
        RETURNING webhook_id, delivered_at
      )
      UPDATE webhooks h SET last_delivered_at = GREATEST(h.last_delivered_at, d.delivered_at), failing = false, last_error = NULL
        FROM d WHERE h.id = d.webhook_id`;
    return;
  }
  await db.$executeRaw`
    WITH d AS (
      UPDATE webhook_deliveries
         SET status = CASE WHEN clock_timestamp() >= created_at + interval '24 hours' THEN 'failed' ELSE 'pending' END,
             next_attempt_at = CASE WHEN clock_timestamp() >= created_at + interval '24 hours' THEN NULL
                 ELSE LEAST(clock_timestamp() + make_interval(secs => LEAST(2 * power(2, LEAST(attempts - 1, 20)), 600)),
                            created_at + interval '24 hours') END,
             response_status = ${result.responseStatus}, response_body = ${result.responseBody}, error = ${result.error}
       WHERE id = ${delivery.id}::uuid AND attempts = ${delivery.attempt}
      RETURNING webhook_id, error
    )
    UPDATE webhooks h SET failing = true, last_error = d.error FROM d WHERE h.id = d.webhook_id`;
}

async function readTruncated(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < RESPONSE_BODY_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return text.length > RESPONSE_BODY_CHARS ? `${text.slice(0, RESPONSE_BODY_CHARS)}…` : text;
}

/** One POST: signed, no redirects followed, cut at `timeoutMs` (headers and body), never throws. */
export async function attemptDelivery(delivery: ClaimedDelivery, options: { publicUrl: string; timeoutMs: number; signal?: AbortSignal }): Promise<AttemptResult> {
  try {
    const secret = decryptSecret(delivery.secretCiphertext);
    const body = renderBody(delivery.format, delivery, options.publicUrl);
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    try {
      const response = await fetch(delivery.url, {
        method: "POST",
        redirect: "manual",
        signal,
        headers: {
          "content-type": "application/json",
          "user-agent": "work-graph-webhooks",
          "x-work-graph-event": delivery.event.type,
          "x-work-graph-delivery": delivery.id,
          "x-work-graph-signature": signatureHeader(secret, delivery.unixSeconds, body),
        },
        body,
      });
      const responseBody = await readTruncated(response);
      if (response.status >= 200 && response.status < 300) return { ok: true, responseStatus: response.status, responseBody, error: null };
      const location = response.headers.get("location");
      const error = response.status >= 300 && response.status < 400
        ? `redirect not followed (HTTP ${response.status}${location ? ` to ${location.slice(0, 200)}` : ""})`
        : `HTTP ${response.status}`;
      return { ok: false, responseStatus: response.status, responseBody, error };
    } catch (error) {
      if (timeout.aborted) return { ok: false, responseStatus: null, responseBody: null, error: `no answer within ${options.timeoutMs / 1000} s` };
      if (options.signal?.aborted) return { ok: false, responseStatus: null, responseBody: null, error: "interrupted: the app instance stopped" };
      return { ok: false, responseStatus: null, responseBody: null, error: networkError(error) };
    }
  } catch (error) {
    return { ok: false, responseStatus: null, responseBody: null, error: error instanceof Error ? error.message : String(error) };
  }
}

/** fetch's "fetch failed" hides the reason in `cause` (ECONNREFUSED, ENOTFOUND, …). */
function networkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return `could not reach the receiver: ${detail}`.slice(0, 300);
}

/**
 * The delivery loop of one app instance: polls the indexed due query every `pollIntervalMs`
 * (and again at once while there is backlog and free capacity), runs up to `concurrency`
 * attempts at a time, at most `perWebhook` for one webhook, each independent of the others.
 * stop() interrupts attempts in flight (they are recorded as failed and retried later) and
 * resolves when all are recorded.
 */
export function startWebhookDispatcher(db: Db, options: DispatcherOptions) {
  const concurrency = options.concurrency ?? 16;
  const perWebhook = options.perWebhook ?? 4;
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const onError = options.onError ?? ((error: unknown) => console.error("[work-graph] webhook dispatcher:", error));
  const stopping = new AbortController();
  const busy = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  let pumping: Promise<void> | null = null;
  let pumpAgain = false;

  const deliver = async (delivery: ClaimedDelivery) => {
    const result = await attemptDelivery(delivery, { publicUrl: options.publicUrl, timeoutMs, signal: stopping.signal });
    try {
      await recordAttempt(db, delivery, result);
    } catch (error) {
      onError(error); // the attempt lease runs out and the delivery is tried again
    }
  };

  const start = (delivery: ClaimedDelivery) => {
    busy.set(delivery.webhookId, (busy.get(delivery.webhookId) ?? 0) + 1);
    const running: Promise<void> = deliver(delivery).finally(() => {
      inFlight.delete(running);
      const left = (busy.get(delivery.webhookId) ?? 1) - 1;
      if (left > 0) busy.set(delivery.webhookId, left);
      else busy.delete(delivery.webhookId);
      pump();
    });
    inFlight.add(running);
  };

  const claimWhileCapacity = async () => {
    while (!stopping.signal.aborted && inFlight.size < concurrency) {
      const max = concurrency - inFlight.size;
      const { claimed, capped } = await claimDueDeliveries(db, { max, perWebhook, busy });
      for (const delivery of claimed) start(delivery);
      // A full batch may mean more is due; a capped one may have left other webhooks' work behind.
      if (claimed.length === 0 || (claimed.length < max && !capped)) break;
    }
  };

  function pump() {
    if (stopping.signal.aborted) return;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = (async () => {
      do {
        pumpAgain = false;
        try {
          await claimWhileCapacity();
        } catch (error) {
          if (!stopping.signal.aborted) onError(error);
        }
      } while (pumpAgain && !stopping.signal.aborted);
      pumping = null;
    })();
  }

  const timer = setInterval(pump, pollIntervalMs);
  pump();
  return {
    /** Run the due query now (e.g. right after a test event was queued). */
    wake: pump,
    async stop() {
      clearInterval(timer);
      stopping.abort();
      await pumping;
      await Promise.all([...inFlight]);
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof startWebhookDispatcher>;
