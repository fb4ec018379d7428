import { randomUUID } from "node:crypto";

/** One id per API request: returned as `x-request-id`, put into INTERNAL errors and the server log line of the same failure. */
export function newRequestId(): string {
  return randomUUID();
}

const REQUEST_ID = Symbol("work-graph.requestId");

/**
 * Tags `error` with the id of the request it failed, for the one failure that reaches tRPC's
 * error formatter without a context (building the context failed). Passed along explicitly:
 * AsyncLocalStorage would cost every promise of the process an async hook on Node 20.
 */
export function tagRequestId<E>(error: E, requestId: string): E {
  if (error !== null && typeof error === "object") (error as Record<symbol, unknown>)[REQUEST_ID] = requestId;
  return error;
}

/** The request id `tagRequestId` put on `error` or on one of its causes. */
export function requestIdOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current !== null && typeof current === "object" && depth < 5; depth++) {
    const tagged = (current as Record<symbol, unknown>)[REQUEST_ID];
    if (typeof tagged === "string") return tagged;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
