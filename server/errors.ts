import type { TRPC_ERROR_CODE_KEY } from "@trpc/server";
import type { Reason } from "@work-graph/contract";

/** Each error reason of API.md (@work-graph/contract) maps to one tRPC code; a reason missing here fails to compile. */
export const TRPC_CODE_BY_REASON = {
  VALIDATION: "BAD_REQUEST",
  UNAUTHENTICATED: "UNAUTHORIZED",
  FORBIDDEN: "FORBIDDEN",
  NOT_FOUND: "NOT_FOUND",
  LEASE_NOT_CURRENT: "CONFLICT",
  NOT_CLAIMABLE: "CONFLICT",
  ALREADY_TERMINAL: "CONFLICT",
  ITEM_LEASED: "CONFLICT",
  DEPENDENCY_CYCLE: "CONFLICT",
  DUPLICATE: "CONFLICT",
  ALREADY_RESOLVED: "CONFLICT",
  IDEMPOTENCY_KEY_REUSED: "CONFLICT",
  WORKER_DRAINED: "FORBIDDEN",
  TOO_LARGE: "PAYLOAD_TOO_LARGE",
  UNAVAILABLE: "SERVICE_UNAVAILABLE",
  INTERNAL: "INTERNAL_SERVER_ERROR",
  LIMIT_REACHED: "CONFLICT",
} as const satisfies Record<Reason, TRPC_ERROR_CODE_KEY>;

/** A refusal the caller can act on. Operations throw it; the tRPC layer puts reason and detail into error.data. */
export class WorkGraphError extends Error {
  constructor(
    readonly reason: Reason,
    message: string,
    readonly detail?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "WorkGraphError";
  }
}

export const notFound = (what: string, id: string) =>
  new WorkGraphError("NOT_FOUND", `${what} ${JSON.stringify(id)} does not exist`, { id });
