import { createHash } from "node:crypto";
import type { Tx } from "../database/transaction";
import { WorkGraphError } from "../errors";
import type { Caller } from "./types";

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([key, v]) => key !== "idempotencyKey" && key !== "key" && v !== undefined)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, v]) => [key, canonical(v)]),
    );
  }
  return value;
}

/** Keys are per worker for agents (any of its tokens), per token otherwise. */
export const idempotencyScope = (caller: Caller, workerId?: string | null) =>
  caller.role === "agent" ? `worker:${caller.workerId}` : workerId ? `token:${caller.tokenId}:worker:${workerId}` : `token:${caller.tokenId}`;

/**
 * Runs `operation` at most once per (scope, key). The receipt row is inserted first, so a
 * concurrent replay with the same key waits on it and then returns the stored result; a
 * replay with another input or operation gets IDEMPOTENCY_KEY_REUSED. Failed operations roll
 * their receipt back, so they may be retried with the same key.
 */
export async function idempotent<T>(
  tx: Tx,
  scope: string,
  key: string | undefined,
  operation: string,
  input: unknown,
  run: () => Promise<T>,
): Promise<T> {
  if (key === undefined) return run();
  const requestHash = createHash("sha256").update(JSON.stringify(canonical(input))).digest("hex");
  const claimed = await tx.$queryRaw<{ key: string }[]>`
    INSERT INTO idempotency_receipts (scope, key, operation, request_hash) VALUES (${scope}, ${key}, ${operation}, ${requestHash})
    ON CONFLICT (scope, key) DO NOTHING RETURNING key`;
  if (claimed.length === 0) {
    const [receipt] = await tx.$queryRaw<{ operation: string; requestHash: string; response: T }[]>`
      SELECT operation, request_hash AS "requestHash", response FROM idempotency_receipts WHERE scope = ${scope} AND key = ${key}`;
    if (!receipt || receipt.operation !== operation || receipt.requestHash !== requestHash) {
      throw new WorkGraphError("IDEMPOTENCY_KEY_REUSED", `idempotency key ${JSON.stringify(key)} was used for a different request`, {
        operation: receipt?.operation,
      });
    }
    return receipt.response;
  }
  const result = await run();
  await tx.$executeRaw`UPDATE idempotency_receipts SET response = ${JSON.stringify(result ?? null)}::jsonb
    WHERE scope = ${scope} AND key = ${key}`;
  return result;
}
