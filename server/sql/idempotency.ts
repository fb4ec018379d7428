import type { Tx } from "../database/transaction";

/**
 * Takes (scope, key) for a new call: inserts its receipt, or takes over one older than
 * `retentionHours` (it counts as absent). False when a live receipt holds the key: a concurrent
 * call with the same key waits here on the row until that one commits or rolls back.
 */
export async function takeIdempotencyKey(tx: Tx, scope: string, key: string, operation: string, requestHash: string, retentionHours: number): Promise<boolean> {
  const taken = await tx.$queryRaw<{ key: string }[]>`
    INSERT INTO idempotency_receipts AS r (scope, key, operation, request_hash) VALUES (${scope}, ${key}, ${operation}, ${requestHash})
    ON CONFLICT (scope, key) DO UPDATE
       SET operation = EXCLUDED.operation, request_hash = EXCLUDED.request_hash, response = NULL, created_at = work_graph_clock()
     WHERE r.created_at < work_graph_clock() - make_interval(secs => ${retentionHours * 3600})
    RETURNING key`;
  return taken.length > 0;
}

/** The receipt holding (scope, key): what it was for and what it answered. */
export async function selectReceipt<T>(tx: Tx, scope: string, key: string): Promise<{ operation: string; requestHash: string; response: T } | undefined> {
  const [receipt] = await tx.$queryRaw<{ operation: string; requestHash: string; response: T }[]>`
    SELECT operation, request_hash AS "requestHash", response FROM idempotency_receipts WHERE scope = ${scope} AND key = ${key}`;
  return receipt;
}

/** Stores the answer a replay of (scope, key) gets. */
export async function storeReceiptResponse(tx: Tx, scope: string, key: string, response: unknown): Promise<void> {
  await tx.$executeRaw`UPDATE idempotency_receipts SET response = ${JSON.stringify(response ?? null)}::jsonb
    WHERE scope = ${scope} AND key = ${key}`;
}

/** Gives (scope, key) back: a replay runs the call again. */
export async function deleteReceipt(tx: Tx, scope: string, key: string): Promise<void> {
  await tx.$executeRaw`DELETE FROM idempotency_receipts WHERE scope = ${scope} AND key = ${key}`;
}

/** Deletes up to `batch` receipts older than `retentionHours`; returns how many it deleted. */
export async function deleteExpiredReceipts(tx: Tx, batch: number, retentionHours: number): Promise<number> {
  return tx.$executeRaw`
    WITH doomed AS MATERIALIZED (
      SELECT scope, key FROM idempotency_receipts
       WHERE created_at < work_graph_clock() - make_interval(secs => ${retentionHours * 3600})
       ORDER BY created_at LIMIT ${batch} FOR UPDATE SKIP LOCKED
    )
    DELETE FROM idempotency_receipts r USING doomed WHERE r.scope = doomed.scope AND r.key = doomed.key`;
}
