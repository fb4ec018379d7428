import { isDatabaseUnavailable } from "../../database/availability";
import type { Db } from "../../db";
import { logger } from "../../log";
import { claimDeliveries, type ClaimedDelivery } from "./claim";
import { isOwnedWebhookFormat, type OwnedWebhookFormat } from "./payload";
import { attemptRecorder } from "./record";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry";
import { attemptDelivery, DELIVERY_TIMEOUT_MS } from "./send";
import type { AttemptResult } from "./statements";

/** How an integration makes one delivery of the webhook it owns; never throws (a failure is recorded and retried). */
export type OwnedWebhookDelivery = (delivery: ClaimedDelivery) => Promise<AttemptResult>;

/** An owned webhook's delivery on an instance where its integration is not running: failed, and retried. */
const notDeliveredHere: OwnedWebhookDelivery = async (delivery) => ({
  ok: false,
  responseStatus: null,
  responseBody: null,
  error: `the integration that delivers ${delivery.format} webhooks is not running on this instance`,
});

export interface DispatcherOptions {
  /** Base of the item links in bodies (WORK_GRAPH_PUBLIC_URL). */
  publicUrl: string;
  /** Attempts in flight in this instance, over all webhooks (default 64). */
  concurrency?: number;
  /** Attempts in flight in this instance for one webhook (default 16), so a slow receiver cannot take every slot. */
  perWebhook?: number;
  /** How often the due query runs when idle. */
  pollIntervalMs?: number;
  /** When failed deliveries are tried again (default DEFAULT_RETRY_POLICY). */
  retry?: RetryPolicy;
  onError?: (error: unknown) => void;
  /** How this instance delivers each integration's own webhook (payload.ts OwnedWebhookFormat); without one its attempts fail and are retried. */
  owned?: Partial<Record<OwnedWebhookFormat, OwnedWebhookDelivery>>;
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
    if (!isDatabaseUnavailable(error)) logger().error({ err: error }, "webhook dispatcher failed");
  });
  const stopping = new AbortController();
  const busy = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  let pumping: Promise<void> | null = null;
  let pumpAgain = false;

  const recorder = attemptRecorder(db, options.retry ?? DEFAULT_RETRY_POLICY, onError);

  const deliver = async (delivery: ClaimedDelivery) => {
    const result = isOwnedWebhookFormat(delivery.format)
      ? await (options.owned?.[delivery.format] ?? notDeliveredHere)(delivery)
      : await attemptDelivery(delivery, { publicUrl: options.publicUrl, timeoutMs: DELIVERY_TIMEOUT_MS, signal: stopping.signal });
    recorder.add(delivery, result);
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
      const { claimed, capped } = await claimDeliveries(db, { max, perWebhook, busy });
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
      await recorder.flush();
    },
  };
}

export type WebhookDispatcher = ReturnType<typeof startWebhookDispatcher>;
