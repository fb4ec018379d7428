import { idempotencyHours, maxConsecutiveExpiries } from "../config";
import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { logger } from "../log";
import { deleteExpiredReceipts } from "../sql/idempotency";
import { endExpiredLeases, lockExpiredDue } from "../sql/leases";
import { sendRepeatedExpiriesToPerson } from "../sql/repeated-expiry";
import { cancelWhereLeaseEnded } from "./lease-end-cancellation";

/**
 * One pass of the expiry sweep (rule 7 (expiry is recorded)): ends up to `batch` expired leases
 * nobody reclaimed (lockExpiredDue), sending items whose leases keep expiring to a person
 * (rule 11 (repeated expiry goes to a person)).
 */
export async function sweepExpiredLeases(db: Db, batch = 200): Promise<number> {
  return inTransaction(db, async (tx) => {
    const ended = await endExpiredLeases(tx, await lockExpiredDue(tx, batch));
    const cancelled = new Set(await cancelWhereLeaseEnded(tx, ended.map((lease) => lease.workItemId)));
    await sendRepeatedExpiriesToPerson(tx, ended.map((lease) => lease.workItemId).filter((id) => !cancelled.has(id)), maxConsecutiveExpiries());
    return ended.length;
  });
}

/** One batch of idempotency receipts past WORK_GRAPH_IDEMPOTENCY_HOURS deleted; returns how many. */
export async function sweepExpiredReceipts(db: Db, batch = 1000): Promise<number> {
  return inTransaction(db, (tx) => deleteExpiredReceipts(tx, batch, idempotencyHours()));
}

/** A cleanup the sweep runs after its own: deletes one batch of rows nobody needs any more, in its own transaction; returns how many. */
export type SweepCleanup = (db: Db) => Promise<number>;

/**
 * Runs the sweep (expired leases, then old idempotency receipts, then each of `cleanups`, such
 * as an integration's) every `intervalMs` until stopped; errors are reported and the loop goes
 * on; `onPass` after each good pass.
 */
export function startExpirySweeper(
  db: Db,
  intervalMs: number,
  onError: (error: unknown) => void = (error) => logger().error({ err: error }, "expiry sweep failed"),
  onPass?: () => void,
  cleanups: readonly SweepCleanup[] = [],
) {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = (async () => {
      try {
        while (!stopped && (await sweepExpiredLeases(db)) > 0) {
          // keep draining while a batch came back
        }
        while (!stopped && (await sweepExpiredReceipts(db)) > 0) {
          // the same for receipts, one short transaction per batch
        }
        for (const cleanup of cleanups) {
          while (!stopped && (await cleanup(db)) > 0) {
            // and for each cleanup
          }
        }
        if (!stopped) onPass?.();
      } catch (error) {
        if (!stopped) onError(error);
      }
      if (!stopped) timer = setTimeout(tick, intervalMs);
    })();
  };
  timer = setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
