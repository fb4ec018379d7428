import { getErrorShape, TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import type { Db } from "../db";
import { readBoundedBody } from "../http/body";
import { TRPC_CODE_BY_REASON, WorkGraphError } from "../errors";
import { maxBatchCalls, maxBodyBytes } from "../http/limits";
import { newRequestId, tagRequestId } from "../http/request-id";
import { observeTrpcRequest } from "../http/observe";
import { createContext, type Context } from "./init";
import { appRouter } from "./root";
import { asUnavailable } from "./unavailable";

const ENDPOINT = "/api/trpc";

/**
 * A tRPC request as an HTTP entry point hands it over: Node's server (server/http/node-api.ts)
 * or a Fetch Request (Next's route handler, fromFetchRequest). The body is read only after
 * authentication, and at most `limit` bytes of it.
 */
export interface ApiRequest {
  url: string;
  method: string;
  headers: Headers;
  signal: AbortSignal;
  /** The body, or null as soon as it is longer than `limit` bytes. */
  readBody(limit: number): Promise<Buffer<ArrayBuffer> | null>;
}

export const fromFetchRequest = (request: Request): ApiRequest => ({
  url: request.url,
  method: request.method,
  headers: request.headers,
  signal: request.signal,
  readBody: (limit) => readBoundedBody(request, limit),
});

/**
 * A refusal made before tRPC runs, in tRPC's error shape (the router's formatter adds reason
 * and detail). A POST refused before its body was read closes the connection after the
 * answer: the unread rest of the body must not be parsed as the next request.
 */
function refusal(error: WorkGraphError, path: string, method: string): Response {
  const trpcError = new TRPCError({ code: TRPC_CODE_BY_REASON[error.reason], message: error.message, cause: error });
  const shape = getErrorShape({ config: appRouter._def._config, error: trpcError, type: "unknown", path, input: undefined, ctx: undefined });
  return new Response(JSON.stringify({ error: shape }), {
    status: getHTTPStatusCodeFromError(trpcError),
    headers: { "content-type": "application/json", ...(method === "POST" ? { connection: "close" } : {}) },
  });
}

const tooLarge = (limit: number) =>
  new WorkGraphError("TOO_LARGE", `the request body is larger than ${limit} bytes (WORK_GRAPH_MAX_BODY_BYTES)`, { limitBytes: limit });

/**
 * Order matters: limits visible in the URL and headers first, then authentication from the
 * headers, and only then the body, read up to the limit. An unauthenticated POST is refused
 * without reading its body (every mutation needs a token).
 *
 * API.md: a mutation is a POST with the input JSON as the body. tRPC only parses a body
 * labelled application/json and answers anything else with 415, so a JSON body sent without
 * that label (fetch with a string body: text/plain; `curl -d`: form-urlencoded) is read as
 * the JSON it is. Not JSON after all: VALIDATION, like any malformed body.
 */
async function respond(db: Db, incoming: ApiRequest, requestId: string, observed: ReturnType<typeof observeTrpcRequest>, onError?: (error: unknown) => void): Promise<Response> {
  const url = new URL(incoming.url);
  const path = url.pathname.slice(ENDPOINT.length + 1);
  const calls = url.searchParams.get("batch") === "1" ? path.split(",").length : 1;
  if (calls > maxBatchCalls()) {
    return refusal(new WorkGraphError("TOO_LARGE", `a batch may hold at most ${maxBatchCalls()} calls (WORK_GRAPH_MAX_BATCH); this one has ${calls}`, { limit: maxBatchCalls() }), path, incoming.method);
  }
  const isPost = incoming.method === "POST";
  const limit = maxBodyBytes();
  if (isPost && Number(incoming.headers.get("content-length") ?? 0) > limit) return refusal(tooLarge(limit), path, incoming.method);

  let context: Context | undefined;
  let contextFailure: unknown;
  try {
    context = await createContext(db, { headers: incoming.headers, method: incoming.method, requestId });
  } catch (error) {
    contextFailure = error;
  }
  if (isPost && context && !context.caller) {
    return refusal(new WorkGraphError("UNAUTHENTICATED", "missing, unknown or revoked token: send Authorization: Bearer <token>"), path, incoming.method);
  }

  let body: Buffer<ArrayBuffer> | undefined;
  if (isPost && context) {
    const read = await incoming.readBody(limit).catch(() => undefined);
    if (read === undefined) return refusal(new WorkGraphError("VALIDATION", "the request body could not be read"), path, incoming.method);
    if (read === null) return refusal(tooLarge(limit), path, incoming.method);
    body = read;
  }
  const headers = new Headers(incoming.headers);
  if (isPost) headers.set("content-type", "application/json");
  const request = new Request(url, { method: incoming.method, headers, body: isPost ? (body ?? Buffer.alloc(0)) : undefined, signal: incoming.signal });

  return fetchRequestHandler({
    endpoint: ENDPOINT,
    req: request,
    router: appRouter,
    createContext: () => (context ? observed.context(context) : Promise.reject(tagRequestId(asUnavailable(contextFailure), requestId))),
    onError: ({ error, path }) => {
      observed.failed(path, error);
      if (error.code === "INTERNAL_SERVER_ERROR") onError?.(error.cause ?? error);
    },
  });
}

/**
 * The one HTTP entry point: Next's route handler and the test server both call it. Every
 * response carries `x-request-id` (the id INTERNAL errors and the server log quote) and
 * `cache-control: no-store` (answers hold tokens, work and questions; no cache keeps them).
 */
export async function handleTrpcRequest(db: Db, incoming: ApiRequest, onError?: (error: unknown) => void): Promise<Response> {
  const requestId = newRequestId();
  // One log line and the request counters per request, refusals before tRPC included; INTERNAL details go to that log.
  const observed = observeTrpcRequest(incoming, requestId);
  const response = await respond(db, incoming, requestId, observed, onError);
  response.headers.set("cache-control", "no-store");
  return observed.finish(response);
}
