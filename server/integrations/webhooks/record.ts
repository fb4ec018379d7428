import type { Db } from "../../db";
import { recordAttempts, type AttemptResult } from "./statements";
import type { ClaimedDelivery } from "./claim";
import type { RetryPolicy } from "./retry";

/**
 * Attempt outcomes written in batches: one commit (statements.ts recordAttempts)
 * records every attempt that ended while the previous batch was being written, scheduling
 * failures' next attempts by `retry`. flush()
 * resolves once everything added so far is recorded (or failed to be: `onError` hears why,
 * their attempt leases run out and the deliveries are tried again).
 */
export function attemptRecorder(db: Db, retry: RetryPolicy, onError: (error: unknown) => void) {
  let unrecorded: { delivery: ClaimedDelivery; result: AttemptResult }[] = [];
  let recording: Promise<void> | null = null;
  const drain = async () => {
    while (unrecorded.length > 0) {
      const batch = unrecorded;
      unrecorded = [];
      try {
        await recordAttempts(db, batch, retry);
      } catch (error) {
        onError(error);
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
  return {
    add(delivery: ClaimedDelivery, result: AttemptResult) {
      unrecorded.push({ delivery, result });
      void flush();
    },
    flush,
  };
}
