import { createTRPCClientProxy, httpLink, TRPCUntypedClient, type TRPCClient } from "@trpc/client";
import type { ApiRouter, ProcedureInputOf, ProcedureOutput } from "@work-graph/contract";
import { toWorkGraphError } from "./errors";
import { NO_RETRY, withRetry, type RetryOptions, type RetryPolicy } from "./retry";

export type { RetryOptions } from "./retry";

/** The typed tRPC client for the Work Graph API: `client.leases.claim.mutate({...})`, `client.workItems.get.query({ id })`. */
export type WorkGraphClient = TRPCClient<ApiRouter>;

export interface WorkGraphClientOptions {
  /** Server base URL, e.g. `http://localhost:3000` (`/api/trpc` is appended unless already there). */
  url: string;
  /** Bearer token (`wga_…` agent, `wgo_…` operator, `wgx_…` admin). Omit only for `health.check`. */
  token?: string;
  /** Per-request timeout in ms (default 30 000). A timed-out call fails with reason NETWORK. */
  timeoutMs?: number;
  /** Extra headers sent with every call. */
  headers?: Record<string, string>;
  /** fetch implementation (default: the global fetch). Handy for proxies, logging or tests. */
  fetch?: typeof fetch;
  /**
   * Retries, with exponential backoff and jitter, of a call the server could not serve right now
   * (HTTP 503: UNAVAILABLE, its database is restarting) or that never reached it (connection
   * refused; for queries also a dropped connection). Default 6 attempts, 250 ms doubling up to
   * 4 s (about 10 s in all); `false` turns it off. Other failures are never retried here.
   */
  retry?: RetryOptions | false;
}

/** `http://host:3000/` → `http://host:3000/api/trpc`. */
export function apiUrl(url: string): string {
  const base = url.replace(/\/+$/, "");
  return base.endsWith("/api/trpc") ? base : `${base}/api/trpc`;
}

/** Maps every rejection to a WorkGraphError (reason, detail, code) before the caller sees it. */
class WorkGraphUntypedClient extends TRPCUntypedClient<ApiRouter> {
  override query(...args: Parameters<TRPCUntypedClient<ApiRouter>["query"]>): Promise<unknown> {
    return super.query(...args).catch((error: unknown) => {
      throw toWorkGraphError(error);
    });
  }

  override mutation(...args: Parameters<TRPCUntypedClient<ApiRouter>["mutation"]>): Promise<unknown> {
    return super.mutation(...args).catch((error: unknown) => {
      throw toWorkGraphError(error);
    });
  }
}

const NEVER_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
const DROPPED = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

function networkCode(error: unknown): string | undefined {
  for (let current = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; current && depth < 4; depth++) {
    if (typeof current.code === "string") return current.code;
    current = current.cause as typeof current;
  }
  return undefined;
}

/**
 * A mutation is retried only when it certainly did not reach the server (or got a 503, which the
 * server sends before doing anything); a query, which changes nothing, also after a dropped connection.
 */
function retryingFetch(inner: typeof fetch, policy: RetryPolicy): typeof fetch {
  return (input, init) => {
    const isQuery = (init?.method ?? "GET").toUpperCase() === "GET";
    return withRetry(() => inner(input, init), {
      policy,
      retryable: (error) => {
        const code = networkCode(error);
        return code !== undefined && (NEVER_SENT.has(code) || (isQuery && DROPPED.has(code)));
      },
      again: (response) => response.status === 503,
      discard: (response) => response.body?.cancel(),
      signal: init?.signal ?? undefined,
    });
  };
}

/**
 * A typed client over plain JSON (no transformer), one HTTP request per call (no batching,
 * so every call is exactly the request API.md describes). Failures reject with WorkGraphError.
 */
export function createWorkGraphClient(options: WorkGraphClientOptions): WorkGraphClient {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const baseFetch = options.fetch ?? globalThis.fetch;
  const timedFetch: typeof fetch = (input, init) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    return baseFetch(input, { ...init, signal });
  };
  const retry = options.retry === false ? NO_RETRY : { attempts: 6, baseDelayMs: 250, maxDelayMs: 4000, ...options.retry };
  const fetchWithRetry = retryingFetch(timedFetch, retry);
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const untyped = new WorkGraphUntypedClient({
    links: [httpLink({ url: apiUrl(options.url), headers, fetch: fetchWithRetry })],
  });
  return createTRPCClientProxy<ApiRouter>(untyped);
}

/** Results and inputs of the procedures the SDK's own code names (the contract's `z.infer` types). */
export type ClaimResult = NonNullable<ProcedureOutput<"leases.claim">>;
export type AttentionRequestResult = ProcedureOutput<"attention.request">;
export type DecomposeResult = ProcedureOutput<"leases.decompose">;
export type FinishResult = ProcedureOutput<"leases.release">;
export type AttentionRequestInput = ProcedureInputOf<"attention.request">;
export type DecomposeInput = ProcedureInputOf<"leases.decompose">;
export type CreateWorkItemInput = ProcedureInputOf<"workItems.create">;
/** v3 queue policy (API.md "Queue policy"). */
export type ClaimInput = NonNullable<ProcedureInputOf<"leases.claim">>;
export type UpdateWorkItemInput = ProcedureInputOf<"workItems.update">;
/** `leases.handBack` without the lease: `{ reason, retryAfterSeconds? }`. */
export type HandBackInput = Omit<ProcedureInputOf<"leases.handBack">, "leaseId" | "epoch" | "workerId">;
