import type { AttemptResult } from "./statements";
import type { ClaimedDelivery } from "./claim";
import { renderBody, signatureHeader, standardWebhookHeaders } from "./payload";
import { decryptSecret } from "./secret-box";

/** How long the receiver's answer may take, headers and body together (API.md: 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Kept of the receiver's answer, for the deliveries view. */
const RESPONSE_BODY_CHARS = 1_000;

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
          ...standardWebhookHeaders(secret, delivery.id, delivery.unixSeconds, body),
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
