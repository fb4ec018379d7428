import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import type { Db } from "../db";
import { observeTrpcRequest } from "../http/observe";
import { newRequestId } from "../http/request-id";
import { createContext } from "./init";
import { appRouter } from "./root";

/**
 * API.md: a mutation is a POST with the input JSON as the body. tRPC only parses a body
 * labelled application/json and answers anything else with 415, so a JSON body sent without
 * that label (fetch with a string body: text/plain; `curl -d`: form-urlencoded) is read as
 * the JSON it is. Not JSON after all: VALIDATION, like any malformed body.
 */
async function withJsonBody(request: Request): Promise<Request> {
  if (request.method !== "POST" || /^application\/json\s*(;|$)/i.test(request.headers.get("content-type") ?? "")) return request;
  const headers = new Headers(request.headers);
  headers.set("content-type", "application/json");
  return new Request(request.url, { method: "POST", headers, body: await request.text(), signal: request.signal });
}

/** The one HTTP entry point: Next's route handler and the test server both call it. */
export async function handleTrpcRequest(db: Db, incoming: Request, onError?: (error: unknown) => void): Promise<Response> {
  const request = await withJsonBody(incoming);
  const requestId = newRequestId();
  const observed = observeTrpcRequest(request, requestId);
  const response = await fetchRequestHandler({
    endpoint: "/api/trpc",
    req: request,
    router: appRouter,
    createContext: async () => observed.context(await createContext(db, { headers: request.headers, method: request.method, requestId })),
    onError: ({ error, path }) => {
      observed.failed(path, error);
      if (error.code === "INTERNAL_SERVER_ERROR") onError?.(error.cause ?? error);
    },
  });
  return observed.finish(response);
}
