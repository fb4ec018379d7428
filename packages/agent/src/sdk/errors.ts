import { TRPCClientError } from "@trpc/client";
import { REASONS, type ApiRouter, type LeaseNotCurrentKind, type Reason } from "@work-graph/contract";

/**
 * The `reason` values of API.md: the one list in @work-graph/contract (bundled into
 * the SDK), re-exported here as `API_REASONS` / `REASONS`.
 */
export const API_REASONS = REASONS;

export type ApiReason = Reason;

/**
 * `ApiReason`, plus two the client adds for failures without an API answer (`INTERNAL` is also
 * what the client reports for an unexpected answer: HTTP 5xx, or a body that is not a tRPC answer):
 * - `NETWORK`: no answer at all (connection refused/reset, DNS, timeout): the call may or may not have happened.
 * - `ABORTED`: the caller aborted the call with its own AbortSignal.
 */
export type ErrorReason = ApiReason | "NETWORK" | "ABORTED";

/** `error.data.detail.kind` of a LEASE_NOT_CURRENT refusal (API.md). */
export type { LeaseNotCurrentKind };

const isApiReason = (value: unknown): value is ApiReason => (API_REASONS as readonly unknown[]).includes(value);

/**
 * Every failed call made through `createWorkGraphClient` rejects with this (it is also a
 * `TRPCClientError`, so tRPC-aware code keeps working). `reason` is the API's reason,
 * `detail` its `error.data.detail` (`{}` when there is none), `code` the tRPC code
 * (e.g. "CONFLICT"; "NETWORK" when nothing came back).
 */
export class WorkGraphError extends TRPCClientError<ApiRouter> {
  readonly reason: ErrorReason;
  readonly detail: Record<string, unknown>;
  readonly code: string;
  /** HTTP status of the answer, null when there was none. */
  readonly httpStatus: number | null;

  constructor(
    reason: ErrorReason,
    message: string,
    options: { detail?: Record<string, unknown>; code?: string; httpStatus?: number | null; cause?: unknown; source?: TRPCClientError<ApiRouter> } = {},
  ) {
    super(message, {
      cause: options.cause instanceof Error ? options.cause : undefined,
      result: options.source?.shape ? { error: options.source.shape } : undefined,
      meta: options.source?.meta,
    });
    // TRPCClientError's constructor pins the prototype to itself; restore ours.
    Object.setPrototypeOf(this, WorkGraphError.prototype);
    this.name = "WorkGraphError";
    this.reason = reason;
    this.detail = options.detail ?? {};
    this.code = options.code ?? (reason === "NETWORK" || reason === "ABORTED" ? reason : "INTERNAL_SERVER_ERROR");
    this.httpStatus = options.httpStatus ?? null;
  }

  /** LEASE_NOT_CURRENT: the lease is not live any more; stop working on the item and never write with it again. */
  get fenced(): boolean {
    return this.reason === "LEASE_NOT_CURRENT";
  }

  /** WORKER_DRAINED: an operator drained this worker; finish the leases you hold and claim nothing new. */
  get drained(): boolean {
    return this.reason === "WORKER_DRAINED";
  }

  /** `detail.kind` of a LEASE_NOT_CURRENT refusal, else undefined. */
  get leaseKind(): LeaseNotCurrentKind | undefined {
    return this.reason === "LEASE_NOT_CURRENT" ? (this.detail.kind as LeaseNotCurrentKind) : undefined;
  }

  /** True when retrying the same call (with the same idempotency key) is the right move. */
  get retryable(): boolean {
    return this.reason === "NETWORK" || this.reason === "INTERNAL" || this.reason === "UNAVAILABLE";
  }
}

function httpStatusOf(error: TRPCClientError<ApiRouter>): number | null {
  const fromData = (error.data as { httpStatus?: unknown } | undefined)?.httpStatus;
  if (typeof fromData === "number") return fromData;
  const response = error.meta?.response as { status?: unknown } | undefined;
  return typeof response?.status === "number" ? response.status : null;
}

/** Turns whatever a tRPC call threw into a WorkGraphError (returns it unchanged when it already is one). */
export function toWorkGraphError(error: unknown): WorkGraphError {
  if (error instanceof WorkGraphError) return error;
  if (error instanceof TRPCClientError) {
    const trpcError = error as TRPCClientError<ApiRouter>;
    const data = trpcError.data as { reason?: unknown; detail?: unknown; code?: unknown } | undefined;
    const httpStatus = httpStatusOf(trpcError);
    if (data && typeof data.code === "string") {
      const reason: ErrorReason = isApiReason(data.reason) ? data.reason : "INTERNAL";
      const detail = data.detail && typeof data.detail === "object" ? (data.detail as Record<string, unknown>) : {};
      return new WorkGraphError(reason, trpcError.message, { detail, code: data.code, httpStatus, cause: trpcError.cause, source: trpcError });
    }
    // No tRPC error body: either no response at all, or something that is not our server answered.
    const cause = trpcError.cause as { name?: string } | undefined;
    if (cause?.name === "AbortError") return new WorkGraphError("ABORTED", trpcError.message, { cause, source: trpcError });
    if (httpStatus !== null) {
      return new WorkGraphError("INTERNAL", `unexpected HTTP ${httpStatus} answer: ${trpcError.message}`, { httpStatus, cause, source: trpcError });
    }
    return new WorkGraphError("NETWORK", `no answer from the server: ${trpcError.message}`, { cause: trpcError.cause ?? trpcError, source: trpcError });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new WorkGraphError("INTERNAL", message, { cause: error });
}

/** `isWorkGraphError(e, "LEASE_NOT_CURRENT")`: narrows and checks the reason in one go. */
export function isWorkGraphError(error: unknown, reason?: ErrorReason): error is WorkGraphError {
  return error instanceof WorkGraphError && (reason === undefined || error.reason === reason);
}
