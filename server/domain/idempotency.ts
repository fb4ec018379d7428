import { createHash } from "node:crypto";
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

/** What a replay must repeat exactly: the input's hash, keys and undefined fields left out, object keys sorted. */
export const requestHash = (input: unknown): string => createHash("sha256").update(JSON.stringify(canonical(input))).digest("hex");
