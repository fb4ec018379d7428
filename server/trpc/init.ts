import { initTRPC, TRPCError } from "@trpc/server";
import { z } from "zod";
import { sessionCaller } from "../auth/sessions";
import { authenticate } from "../auth/tokens";
import type { Db } from "../db";
import { noteDatabaseUp } from "../database/availability";
import { sqlState } from "../database/transaction";
import { CSRF_HEADER, type Reason, type Role } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { TRPC_CODE_BY_REASON, WorkGraphError } from "../errors";
import { requestIdOf } from "../http/request-id";
import { asUnavailable } from "./unavailable";

export const SESSION_COOKIE = "wg_session";

export interface Context {
  db: Db;
  caller: Caller | null;
  requestId: string;
  /**
   * Checks the request's credential again (the bearer token, or the dashboard session and its
   * token): long-lived requests call it. Absent for in-process callers, which have none.
   */
  reauthenticate?: () => Promise<Caller | null>;
}

/** What authentication reads of a request's headers (a Fetch Headers object has it; names are lower case). */
export interface RequestHeaders {
  get(name: string): string | null;
}

export interface RequestInfo {
  headers: RequestHeaders;
  method: string;
  requestId: string;
}

/** The raw cookie value: session ids are URL-safe, so nothing is decoded (a malformed value simply matches no session). */
export function cookieValue(header: string | null, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return null;
}

/**
 * Builds the context from a request: a bearer token (agents, scripts), or the dashboard's
 * session cookie. Cookie-authenticated mutations must carry CSRF_HEADER, which a cross-site
 * page cannot add (and SameSite=strict already keeps the cookie off cross-site requests).
 */
export async function createContext(db: Db, request: RequestInfo): Promise<Context> {
  const { requestId } = request;
  const authorization = request.headers.get("authorization");
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  if (bearer) return { db, requestId, caller: await authenticate(db, bearer), reauthenticate: () => authenticate(db, bearer) };
  const session = cookieValue(request.headers.get("cookie"), SESSION_COOKIE);
  if (session) {
    if (request.method !== "GET" && request.headers.get(CSRF_HEADER) !== "1") return { db, requestId, caller: null };
    return { db, requestId, caller: await sessionCaller(db, session), reauthenticate: () => sessionCaller(db, session) };
  }
  return { db, requestId, caller: null };
}

export function reasonOf(error: TRPCError): { reason: Reason | "INTERNAL"; detail?: Record<string, unknown> } {
  const cause = error.cause;
  if (cause instanceof WorkGraphError) return { reason: cause.reason, detail: cause.detail };
  switch (error.code) {
    case "BAD_REQUEST":
    case "PARSE_ERROR":
    case "METHOD_NOT_SUPPORTED":
    case "UNSUPPORTED_MEDIA_TYPE":
      return { reason: "VALIDATION" };
    case "PAYLOAD_TOO_LARGE":
      return { reason: "TOO_LARGE" };
    case "UNAUTHORIZED":
      return { reason: "UNAUTHENTICATED" };
    case "FORBIDDEN":
      return { reason: "FORBIDDEN" };
    case "NOT_FOUND":
      return { reason: "NOT_FOUND" };
    default:
      return { reason: "INTERNAL" };
  }
}

function describeIssues(issues: { path?: PropertyKey[]; message?: string }[]): string {
  return issues
    .map((issue) => `${issue.path && issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : ""}${issue.message ?? "invalid"}`)
    .join("; ");
}

/**
 * Who may call a procedure, as meta on it (the OpenAPI document reads it): nobody needs a token
 * ("public"), any token ("authenticated"), or one of these roles (admin may always).
 */
export interface ProcedureMeta {
  access: "public" | "authenticated" | Role[];
}

const t = initTRPC.context<Context>().meta<ProcedureMeta>().create({
  // Stack traces stay in the server log, not in responses.
  isDev: process.env.NODE_ENV === "development",
  // events.stream: a ping every 10 s keeps proxies from closing an idle stream; a client that hears nothing for 30 s reconnects (with Last-Event-ID).
  sse: { ping: { enabled: true, intervalMs: 10_000 }, client: { reconnectAfterInactivityMs: 30_000 } },
  errorFormatter({ shape, error, ctx }) {
    const { reason, detail } = reasonOf(error);
    if (reason === "INTERNAL") {
      // A defect: the caller gets an id to quote, the server log (handleTrpcRequest's onError) the details.
      const requestId = ctx?.requestId ?? requestIdOf(error) ?? "unknown";
      return {
        ...shape,
        message: `internal error; the server log has the details under request id ${requestId}`,
        data: { code: shape.data.code, httpStatus: shape.data.httpStatus, path: shape.data.path, reason, detail: { requestId } },
      };
    }
    const cause = error.cause as { issues?: unknown } | undefined;
    const issues = error.code === "BAD_REQUEST" && Array.isArray(cause?.issues) ? cause.issues : undefined;
    return {
      ...shape,
      message: issues ? `invalid input: ${describeIssues(issues)}` : shape.message,
      data: {
        ...shape.data,
        reason,
        ...(detail ? { detail } : {}),
        ...(issues ? { issues, zodError: cause instanceof z.ZodError ? z.flattenError(cause) : null } : {}),
      },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Turns domain refusals (and the few database errors that mean bad input) into tRPC errors with the right code. */
const mapDomainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (result.ok) noteDatabaseUp();
  if (!result.ok) {
    const cause = result.error.cause;
    const unavailable = asUnavailable(cause);
    if (unavailable !== cause) throw unavailable;
    if (cause instanceof WorkGraphError) {
      throw new TRPCError({ code: TRPC_CODE_BY_REASON[cause.reason], message: cause.message, cause });
    }
    const state = sqlState(cause);
    // invalid_text_representation / numeric or datetime out of range: input the schema let through.
    // character_not_in_repertoire / untranslatable_character: text PostgreSQL cannot store (the schemas refuse it first).
    if (state === "22P02" || state === "22003" || state === "22008" || state === "22001" || state === "22021" || state === "22P05") {
      const refusal = new WorkGraphError("VALIDATION", "input value is out of range or malformed");
      throw new TRPCError({ code: "BAD_REQUEST", message: refusal.message, cause: refusal });
    }
    // query_canceled: the statement timeout (WORK_GRAPH_STATEMENT_TIMEOUT_MS) ended a slow statement.
    if (state === "57014") {
      const refusal = new WorkGraphError("UNAVAILABLE", "the database did not answer within the statement timeout; retry later, or ask for less");
      throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: refusal.message, cause: refusal });
    }
  }
  return result;
});

export const publicProcedure = t.procedure.meta({ access: "public" }).use(mapDomainErrors);

export const authedProcedure = publicProcedure.meta({ access: "authenticated" }).use(({ ctx, next }) => {
  if (!ctx.caller) {
    const refusal = new WorkGraphError("UNAUTHENTICATED", "missing, unknown or revoked token: send Authorization: Bearer <token>");
    throw new TRPCError({ code: "UNAUTHORIZED", message: refusal.message, cause: refusal });
  }
  return next({ ctx: { ...ctx, caller: ctx.caller } });
});

/** Procedures open to the given roles; admin may do everything. */
export function rolesProcedure(...roles: Role[]) {
  return authedProcedure.meta({ access: [...roles, "admin"] }).use(({ ctx, next }) => {
    if (ctx.caller.role !== "admin" && !roles.includes(ctx.caller.role)) {
      const refusal = new WorkGraphError("FORBIDDEN", `a ${ctx.caller.role} token may not do this (allowed: ${[...roles, "admin"].join(", ")})`);
      throw new TRPCError({ code: "FORBIDDEN", message: refusal.message, cause: refusal });
    }
    return next();
  });
}
