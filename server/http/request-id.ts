import { randomUUID } from "node:crypto";

/** A fresh id for one HTTP request: in the tRPC context, the `x-request-id` response header and the request's log line. */
export function newRequestId(): string {
  return randomUUID();
}
