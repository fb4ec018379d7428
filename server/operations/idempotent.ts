import { idempotencyHours } from "../config";
import type { Tx } from "../database/transaction";
import { requestHash } from "../domain/idempotency";
import { WorkGraphError } from "../errors";
import { deleteReceipt, selectReceipt, storeReceiptResponse, takeIdempotencyKey } from "../sql/idempotency";

/**
 * Runs `operation` at most once per (scope, key) within WORK_GRAPH_IDEMPOTENCY_HOURS. The
 * receipt row is inserted first, so a concurrent replay with the same key waits on it and then
 * returns the stored result; a replay with another input or operation gets
 * IDEMPOTENCY_KEY_REUSED. Failed operations roll their receipt back, so they may be retried
 * with the same key. A receipt older than the retention counts as absent (the sweeper deletes
 * it in batches): a replay after that is a new call. `keep` decides whether a result is worth a
 * receipt at all (a claim that found nothing is not: replaying it must look again).
 */
export async function idempotent<T>(
  tx: Tx,
  scope: string,
  key: string | undefined,
  operation: string,
  input: unknown,
  run: () => Promise<T>,
  keep: (result: T) => boolean = () => true,
): Promise<T> {
  if (key === undefined) return run();
  const hash = requestHash(input);
  if (!(await takeIdempotencyKey(tx, scope, key, operation, hash, idempotencyHours()))) {
    const receipt = await selectReceipt<T>(tx, scope, key);
    if (!receipt || receipt.operation !== operation || receipt.requestHash !== hash) {
      throw new WorkGraphError("IDEMPOTENCY_KEY_REUSED", `idempotency key ${JSON.stringify(key)} was used for a different request`, {
        operation: receipt?.operation,
      });
    }
    return receipt.response;
  }
  const result = await run();
  if (keep(result)) await storeReceiptResponse(tx, scope, key, result);
  else await deleteReceipt(tx, scope, key);
  return result;
}
