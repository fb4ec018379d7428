/**
 * The one retry policy of the agent package: exponential backoff with jitter, a bounded number
 * of attempts, and a caller-given test of what may be tried again. The client's HTTP layer,
 * runWorker, the MCP server and the CLI all retry through `withRetry`.
 */
import { toWorkGraphError, type WorkGraphError } from "./errors";

export interface RetryOptions {
  /** Tries in all, the first included. */
  attempts?: number;
  /** The wait before the second try; it doubles per try, up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const NO_RETRY: RetryPolicy = { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 };

/** A replay of a call that is safe to repeat (an idempotency key, a query, a renewal): three tries within about a second. */
export const REPLAY: RetryPolicy = { attempts: 3, baseDelayMs: 300, maxDelayMs: 1200 };

/** The wait before try `step + 1`: `base × 2^step`, capped, drawn from [½, 1] of it so a fleet does not retry in lockstep. */
export const backoffDelay = (policy: Pick<RetryPolicy, "baseDelayMs" | "maxDelayMs">, step: number) =>
  Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** step) * (0.5 + Math.random() / 2);

/** Resolves after `ms`, or at once when `wake` aborts. */
export function sleep(ms: number, wake?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (wake?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      wake?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    wake?.addEventListener("abort", done, { once: true });
  });
}

export interface RetryLoop<T> {
  policy: RetryPolicy;
  /** Whether a failure may be tried again. */
  retryable: (failure: unknown) => boolean;
  /** Whether a result asks to be tried again; after the last try it is returned as is. `discard` frees it first. */
  again?: (result: T) => boolean;
  discard?: (result: T) => Promise<void> | void;
  onRetry?: (failure: unknown) => void;
  /** Aborting it stops the retries: the wait ends and the signal's reason is thrown. */
  signal?: AbortSignal;
}

export async function withRetry<T>(call: (attempt: number) => Promise<T>, loop: RetryLoop<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const last = attempt >= loop.policy.attempts;
    try {
      const result = await call(attempt);
      if (last || !loop.again?.(result)) return result;
      await loop.discard?.(result);
    } catch (failure) {
      if (last || !loop.retryable(failure) || loop.signal?.aborted) throw failure;
      loop.onRetry?.(failure);
    }
    await sleep(backoffDelay(loop.policy, attempt - 1), loop.signal);
    if (loop.signal?.aborted) throw loop.signal.reason;
  }
}

/**
 * Repeats an API call when no answer came back or the server could not serve it (a `retryable`
 * WorkGraphError: NETWORK, UNAVAILABLE, INTERNAL). Only for calls a replay cannot apply twice
 * (an idempotency key, a query, a renewal). Rejects with a WorkGraphError.
 */
export async function retryUnanswered<T>(call: (attempt: number) => Promise<T>, policy: RetryPolicy = REPLAY, onRetry?: (error: WorkGraphError) => void): Promise<T> {
  try {
    return await withRetry(call, {
      policy,
      retryable: (failure) => toWorkGraphError(failure).retryable,
      onRetry: onRetry && ((failure) => onRetry(toWorkGraphError(failure))),
    });
  } catch (failure) {
    throw toWorkGraphError(failure);
  }
}
