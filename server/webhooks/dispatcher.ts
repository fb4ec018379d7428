import { isDatabaseUnavailable } from "../database/availability";
import type { Db } from "../db";
import { STAGE_SQL } from "../domain/readiness";
import { toEvent } from "../domain/views";
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
  /** Attempts in flight in this instance, over all webhooks (default 64). */
  concurrency?: number;
  /** Attempts in flight in this instance for one webhook (default 16), so a slow receiver cannot take every slot. */
  perWebhook?: number;
  /** How often the due query runs when idle. */
  pollIntervalMs?: number;
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
 * Claims due deliveries for this instance in one statement (its own short transaction):
 * candidates are locked with FOR UPDATE SKIP LOCKED (another instance's claim never waits for
 * or repeats ours), at most `perWebhook` minus this instance's attempts in flight are taken per
 * webhook, and each taken one gets attempts + 1 and an attempt lease in next_attempt_at.
 * Deliveries of deleted webhooks found on the way are marked failed. `capped` says some due
 * candidates were left for a webhook that had no free slot.
 */
export async function claimDueDeliveries(
  db: Db,
  input: { max: number; perWebhook: number; busy: ReadonlyMap<string, number> },
): Promise<{ claimed: ClaimedDelivery[]; capped: boolean }> {
  const busyIds = [...input.busy.keys()];
  const busyCounts = busyIds.map((id) => input.busy.get(id)!);
  const rows = await db.$queryRaw<(ClaimedRow & { capped: boolean })[]>`
    WITH busy AS (
      SELECT * FROM unnest(${busyIds}::uuid[], ${busyCounts}::int[]) AS b(webhook_id, in_flight)
    ), candidates AS (
      SELECT d.id, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
       WHERE d.status = 'pending' AND d.next_attempt_at <= clock_timestamp()
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
             next_attempt_at = clock_timestamp() + make_interval(secs => ${ATTEMPT_LEASE_SECONDS})
        FROM taken WHERE d.id = taken.id
      RETURNING d.id, d.webhook_id, d.attempts, d.event_sequence, d.event_type, d.created_at
    )
    SELECT c.id::text, c.webhook_id::text AS "webhookId", c.attempts, h.url, h.format,
           h.secret_ciphertext AS "secretCiphertext", c.created_at AS "deliveryCreatedAt",
           floor(extract(epoch FROM clock_timestamp()))::int AS "unixSeconds",
           e.sequence, e.work_item_id AS "workItemId", c.event_type AS type, e.actor,
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
  return { claimed: rows.map(toClaimed), capped: rows.some((row) => row.capped) };
}

export interface AttemptResult {
  ok: boolean;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}

/**
 * Records attempts' outcomes in one statement (one commit for a whole batch), each only if no
 * later attempt of its delivery has started. A failure is retried after 2 s · 2^(attempt−1),
 * at most 10 min apart, until 24 h after the delivery was created; then it is `failed`. Each
 * webhook's health follows its latest recorded attempt.
 */
export async function recordAttempts(db: Db, results: { delivery: { id: string; attempt: number }; result: AttemptResult }[]): Promise<void> {
  if (results.length === 0) return;
  const column = <T>(pick: (entry: (typeof results)[number]) => T) => results.map(pick);
  await db.$executeRaw`
    WITH r AS (
      SELECT * FROM unnest(${column((e) => e.delivery.id)}::uuid[], ${column((e) => e.delivery.attempt)}::int[],
                           ${column((e) => e.result.ok)}::boolean[], ${column((e) => e.result.responseStatus)}::int[],
                           ${column((e) => e.result.responseBody)}::text[], ${column((e) => e.result.error)}::text[])
             WITH ORDINALITY AS r(id, attempt, ok, response_status, response_body, error, n)
    ), recorded AS (
      UPDATE webhook_deliveries d
         SET status = CASE WHEN r.ok THEN 'delivered'
                           WHEN clock_timestamp() >= d.created_at + interval '24 hours' THEN 'failed' ELSE 'pending' END,
             delivered_at = CASE WHEN r.ok THEN clock_timestamp() END,
             next_attempt_at = CASE WHEN r.ok OR clock_timestamp() >= d.created_at + interval '24 hours' THEN NULL
                 ELSE LEAST(clock_timestamp() + make_interval(secs => LEAST(2 * power(2, LEAST(d.attempts - 1, 20)), 600)),
                            d.created_at + interval '24 hours') END,
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
  const concurrency = options.concurrency ?? 64;
  const perWebhook = options.perWebhook ?? 16;
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  // A database outage is reported once by the availability log (server/database/availability.ts), not per poll.
  const onError = options.onError ?? ((error: unknown) => {
    if (!isDatabaseUnavailable(error)) console.error("[work-graph] webhook dispatcher:", error);
  });
  const stopping = new AbortController();
  const busy = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  let pumping: Promise<void> | null = null;
  let pumpAgain = false;

  // Outcomes are written in batches: one commit records every attempt that ended meanwhile.
  let unrecorded: Parameters<typeof recordAttempts>[1] = [];
  let recording: Promise<void> | null = null;
  const drain = async () => {
    while (unrecorded.length > 0) {
      const batch = unrecorded;
      unrecorded = [];
      try {
        await recordAttempts(db, batch);
      } catch (error) {
        onError(error); // their attempt leases run out and the deliveries are tried again
      }
    }
  };
  const flush = (): Promise<void> => {
    recording ??= drain().finally(() => {
      recording = null;
      if (unrecorded.length > 0) void flush();
    });
    return recording;
  };

  const deliver = async (delivery: ClaimedDelivery) => {
    const result = await attemptDelivery(delivery, { publicUrl: options.publicUrl, timeoutMs: DELIVERY_TIMEOUT_MS, signal: stopping.signal });
    unrecorded.push({ delivery, result });
    void flush();
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
      await flush();
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof startWebhookDispatcher>;
