/** setTimeout's ceiling. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A wait in progress, as its waker sees it. */
export interface Waiting<T> {
  /** Ends the wait, once: it resolves with `value` or rejects with `error`. Later calls do nothing. */
  settle(outcome: { value: T } | { error: unknown }): void;
  readonly settled: boolean;
}

/**
 * The one waiting primitive of the wake-up hub (claim waiters, attention waiters and event
 * readers): a promise and a timer, never a connection or a lock. `enlist` registers the wait
 * where its waker finds it and returns how to remove it again. When `waitMs` runs out or
 * `signal` aborts, `onTimeUp` decides (by default the wait ends with `timeUpValue`). Once
 * settled, the timer and the abort listener are gone and the wait is removed.
 */
export function wait<T>(options: {
  waitMs: number;
  signal?: AbortSignal;
  enlist: (waiting: Waiting<T>) => () => void;
  timeUpValue: T;
  onTimeUp?: (waiting: Waiting<T>) => void;
}): Promise<T> {
  const { signal } = options;
  return new Promise<T>((resolve, reject) => {
    let enlisted = false;
    const waiting = {
      settled: false,
      settle(outcome: { value: T } | { error: unknown }) {
        if (waiting.settled) return;
        waiting.settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", timeUp);
        if (enlisted) leave();
        if ("error" in outcome) reject(outcome.error);
        else resolve(outcome.value);
      },
    };
    const timeUp = () => (options.onTimeUp ? options.onTimeUp(waiting) : waiting.settle({ value: options.timeUpValue }));
    const timer = setTimeout(timeUp, Math.min(options.waitMs, MAX_TIMER_MS));
    signal?.addEventListener("abort", timeUp, { once: true });
    const leave = options.enlist(waiting);
    enlisted = true;
    // Settled while enlisting: it could not remove itself yet.
    if (waiting.settled) leave();
  });
}

/** Delays beyond setTimeout's ceiling wait as long as it allows. */
export const timerDelay = (ms: number): number => Math.min(ms, MAX_TIMER_MS);
