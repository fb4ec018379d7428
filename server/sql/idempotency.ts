import { idempotencyHours } from "../config";
import type { Tx } from "../database/transaction";
import { requestHash } from "../domain/idempotency";
import { WorkGraphError } from "../errors";

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
  const claimed = await tx.$queryRaw<{ key: string }[]>`
    INSERT INTO idempotency_receipts AS r (scope, key, operation, request_hash) VALUES (${scope}, ${key}, ${operation}, ${hash})
    ON CONFLICT (scope, key) DO UPDATE
       SET operation = EXCLUDED.operation, request_hash = EXCLUDED.request_hash, response = NULL, created_at = work_graph_clock()
     WHERE r.created_at < work_graph_clock() - make_interval(secs => ${idempotencyHours() * 3600})
    RETURNING key`;
  if (claimed.length === 0) {
    const [receipt] = await tx.$queryRaw<{ operation: string; requestHash: string; response: T }[]>`
      SELECT operation, request_hash AS "requestHash", response FROM idempotency_receipts WHERE scope = ${scope} AND key = ${key}`;
    if (!receipt || receipt.operation !== operation || receipt.requestHash !== hash) {
      throw new WorkGraphError("IDEMPOTENCY_KEY_REUSED", `idempotency key ${JSON.stringify(key)} was used for a different request`, {
        operation: receipt?.operation,
      });
    }
    return receipt.response;
  }
  const result = await run();
  if (keep(result)) {
    await tx.$executeRaw`UPDATE idempotency_receipts SET response = ${JSON.stringify(result ?? null)}::jsonb
      WHERE scope = ${scope} AND key = ${key}`;
  } else {
    await tx.$executeRaw`DELETE FROM idempotency_receipts WHERE scope = ${scope} AND key = ${key}`;
  }
  return result;
}

/** Deletes up to `batch` receipts older than the retention; returns how many it deleted. */
export async function deleteExpiredReceipts(tx: Tx, batch: number): Promise<number> {
  return tx.$executeRaw`
    WITH doomed AS MATERIALIZED (
      SELECT scope, key FROM idempotency_receipts
       WHERE created_at < work_graph_clock() - make_interval(secs => ${idempotencyHours() * 3600})
       ORDER BY created_at LIMIT ${batch} FOR UPDATE SKIP LOCKED
    )
    DELETE FROM idempotency_receipts r USING doomed WHERE r.scope = doomed.scope AND r.key = doomed.key`;
}
