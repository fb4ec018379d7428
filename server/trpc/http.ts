import { getErrorShape, getTRPCErrorFromUnknown, TRPCError, type AnyTRPCProcedure } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import type { Instance } from "../instance";
import { readBoundedBody } from "../http/body";
import { TRPC_CODE_BY_REASON, WorkGraphError } from "../errors";
import { maxBatchCalls, maxBodyBytes } from "../config";
import { newRequestId, tagRequestId } from "../http/request-id";
import { createContext, type Context, type RequestHeaders } from "./init";
import { observeTrpcRequest } from "./observe";
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
  headers: RequestHeaders;
  /** The headers as a Fetch Headers object (built only for requests tRPC's fetch adapter serves). */
  fetchHeaders(): Headers;
  signal: AbortSignal;
  /** The body, or null as soon as it is longer than `limit` bytes. */
  readBody(limit: number): Promise<Buffer<ArrayBuffer> | null>;
}

/** An answer: a JSON text, or a stream (events.stream's Server-Sent Events never end by themselves). */
export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  body: string | ReadableStream<Uint8Array> | null;
}

export const fromFetchRequest = (request: Request): ApiRequest => ({
  url: request.url,
  method: request.method,
  headers: request.headers,
  fetchHeaders: () => request.headers,
  signal: request.signal,
  readBody: (limit) => readBoundedBody(request, limit),
});

export const toFetchResponse = (response: ApiResponse): Response => new Response(response.body, { status: response.status, headers: response.headers });

const json = (status: number, value: unknown, headers: Record<string, string> = {}): ApiResponse => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(value),
});

/**
 * A refusal made before tRPC runs, in tRPC's error shape (the router's formatter adds reason
 * and detail). A POST refused before its body was read closes the connection after the
 * answer: the unread rest of the body must not be parsed as the next request.
 */
function refusal(error: WorkGraphError, path: string, method: string): ApiResponse {
  const trpcError = new TRPCError({ code: TRPC_CODE_BY_REASON[error.reason], message: error.message, cause: error });
  const shape = getErrorShape({ config: appRouter._def._config, error: trpcError, type: "unknown", path, input: undefined, ctx: undefined });
  return json(getHTTPStatusCodeFromError(trpcError), { error: shape }, method === "POST" ? { connection: "close" } : {});
}

const tooLarge = (limit: number) =>
  new WorkGraphError("TOO_LARGE", `the request body is larger than ${limit} bytes (WORK_GRAPH_MAX_BODY_BYTES)`, { limitBytes: limit });

// Typed as the nested router, but at run time a flat record by dotted path (as tRPC looks procedures up).
const procedures = appRouter._def.procedures as unknown as Record<string, AnyTRPCProcedure>;

/**
 * The procedure a request calls when it is one plain call that calls.direct can answer: not a
 * batch, a query by GET or a mutation by POST, the path spelled plainly, no streaming asked
 * for. Anything else (batches, subscriptions, wrong methods, unknown paths) goes through tRPC's
 * fetch adapter, which also words those refusals.
 */
function plainCall(incoming: ApiRequest, url: URL, path: string): AnyTRPCProcedure | undefined {
  if (url.searchParams.has("batch") || incoming.headers.get("trpc-accept") !== null || !/^[A-Za-z0-9_.]+$/.test(path)) return undefined;
  const procedure = Object.hasOwn(procedures, path) ? procedures[path] : undefined;
  if (procedure?._def.type === "mutation" && incoming.method === "POST") return procedure;
  const contentType = incoming.headers.get("content-type");
  if (procedure?._def.type === "query" && incoming.method === "GET" && (contentType === null || contentType.startsWith("application/json"))) return procedure;
  return undefined;
}

/**
 * One plain call, answered as tRPC's fetch adapter answers it (tests/api/direct-calls.test.ts
 * compares the two), without building a Fetch Request and Response around it: on the agents'
 * hot path that machinery cost about as much CPU as the call itself (BENCHMARKS.md).
 */
async function callDirectly(
  procedure: AnyTRPCProcedure,
  path: string,
  url: URL,
  body: Buffer<ArrayBuffer> | undefined,
  ctx: Context,
  signal: AbortSignal,
  onError: (error: TRPCError) => void,
): Promise<ApiResponse> {
  const type = procedure._def.type;
  let input: unknown;
  const getRawInput = async () => {
    // As the adapter reads it: the `input` parameter of a GET, the whole body of a POST (UTF-8, BOM dropped).
    const text = type === "query" ? url.searchParams.get("input") : new TextDecoder().decode(body);
    try {
      input = text === null || (text === "" && type === "query") ? undefined : JSON.parse(text);
    } catch (cause) {
      throw new TRPCError({ code: "BAD_REQUEST", message: (cause as Error).message, cause });
    }
    return input;
  };
  try {
    const data = await procedure({ path, getRawInput, ctx, type, signal, batchIndex: 0 });
    return json(200, { result: { data } }, { vary: "trpc-accept, accept" });
  } catch (cause) {
    const error = getTRPCErrorFromUnknown(cause);
    onError(error);
    const shape = getErrorShape({ config: appRouter._def._config, error, type, path, input, ctx });
    return json(getHTTPStatusCodeFromError(error), { error: shape }, { vary: "trpc-accept, accept" });
  }
}

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
async function respond(instance: Instance, incoming: ApiRequest, requestId: string, observed: ReturnType<typeof observeTrpcRequest>, onError?: (error: unknown) => void): Promise<ApiResponse> {
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
    context = await createContext(instance, { headers: incoming.headers, method: incoming.method, requestId });
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
  const failed = (error: TRPCError, failedPath: string | undefined) => {
    observed.failed(failedPath, error);
    if (error.code === "INTERNAL_SERVER_ERROR") onError?.(error.cause ?? error);
  };

  const procedure = context && plainCall(incoming, url, path);
  if (procedure && context) return callDirectly(procedure, path, url, body, observed.context(context), incoming.signal, (error) => failed(error, path));

  const headers = new Headers(incoming.fetchHeaders());
  if (isPost) headers.set("content-type", "application/json");
  const request = new Request(url, { method: incoming.method, headers, body: isPost ? (body ?? Buffer.alloc(0)) : undefined, signal: incoming.signal });
  const response = await fetchRequestHandler({
    endpoint: ENDPOINT,
    req: request,
    router: appRouter,
    createContext: () => (context ? observed.context(context) : Promise.reject(tagRequestId(asUnavailable(contextFailure), requestId))),
    onError: ({ error, path }) => failed(error, path),
  });
  return { status: response.status, headers: Object.fromEntries(response.headers), body: response.body };
}

/**
 * The one HTTP entry point: Next's route handler and the test server both call it. Every
 * response carries `x-request-id` (the id INTERNAL errors and the server log quote) and
 * `cache-control: no-store` (answers hold tokens, work and questions; no cache keeps them).
 */
export async function handleTrpcRequest(instance: Instance, incoming: ApiRequest, onError?: (error: unknown) => void): Promise<ApiResponse> {
  const requestId = newRequestId();
  // One log line and the request counters per request, refusals before tRPC included; INTERNAL details go to that log.
  const observed = observeTrpcRequest(instance.metrics, incoming, requestId);
  const response = await respond(instance, incoming, requestId, observed, onError);
  response.headers["cache-control"] = "no-store";
  return observed.finish(response);
}
