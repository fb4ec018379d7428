import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import type { TRPCError } from "@trpc/server";
import type { Caller } from "../domain/types";
import { logger } from "../log";
import type { Metrics } from "../metric-registry";
import { countHttpRequest } from "../metrics";
import { reasonOf } from "./init";
import { appRouter } from "./root";

const ENDPOINT = "/api/trpc/";
const knownProcedures = new Set(Object.keys(appRouter._def.procedures));

/** The procedures a tRPC URL names (a batch names several); names outside the router count as "unknown". */
function proceduresOf(url: string): string[] {
  const { pathname } = new URL(url);
  const at = pathname.indexOf(ENDPOINT);
  const names = at < 0 ? [] : decodeURIComponent(pathname.slice(at + ENDPOINT.length)).split(",");
  return names.map((name) => (knownProcedures.has(name) ? name : "unknown"));
}

/**
 * Observes one tRPC HTTP request: counts each call by procedure and status code and writes one
 * log line with the request id, procedures, caller's role and worker, duration, status and,
 * on failure, the reason. Never logs headers, inputs or tokens.
 */
export function observeTrpcRequest(metrics: Metrics, request: { url: string }, requestId: string) {
  const started = performance.now();
  const procedures = proceduresOf(request.url);
  let caller: Caller | null = null;
  const failures = new Map<string, { status: number; reason: string }>();
  return {
    /** Passes the built context through, remembering who called. */
    context<C extends { caller: Caller | null }>(context: C): C {
      caller = context.caller;
      return context;
    },
    failed(path: string | undefined, error: TRPCError) {
      failures.set(path && knownProcedures.has(path) ? path : "unknown", { status: getHTTPStatusCodeFromError(error), reason: reasonOf(error).reason });
      if (error.code === "INTERNAL_SERVER_ERROR") logger().error({ requestId, procedure: path, err: error.cause ?? error }, "internal error");
    },
    finish<R extends { status: number; headers: Record<string, string> }>(response: R): R {
      for (const procedure of procedures) countHttpRequest(metrics, procedure, failures.get(procedure)?.status ?? (response.status >= 400 ? response.status : 200));
      const reasons = [...new Set([...failures.values()].map((failure) => failure.reason))];
      const line = {
        requestId,
        procedure: procedures.join(","),
        role: caller?.role ?? null,
        workerId: caller?.workerId ?? null,
        status: response.status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        ...(reasons.length > 0 ? { reason: reasons.join(",") } : {}),
      };
      if (response.status >= 500) logger().error(line, "request");
      else logger().info(line, "request");
      response.headers["x-request-id"] = requestId;
      return response;
    },
  };
}
