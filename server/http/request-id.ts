import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";

/** One id per API request: returned as `x-request-id`, put into INTERNAL errors and the server log line of the same failure. */
export function newRequestId(): string {
  return randomUUID();
}

const current = new AsyncLocalStorage<string>();

/** Runs one request's handling with its id, so code without the tRPC context (error formatting when the context failed) can still name it. */
export function withRequestId<T>(requestId: string, work: () => Promise<T>): Promise<T> {
  return current.run(requestId, work);
}

export function currentRequestId(): string | undefined {
  return current.getStore();
}
