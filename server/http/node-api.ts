import type { IncomingMessage, ServerResponse } from "node:http";
import { liveness, readiness, type HealthReport } from "../health";
import type { Instance } from "../instance";
import { handleSlackInteraction, SLACK_INTERACTIONS_PATH } from "../integrations/slack/interactions";
import { handleTrpcRequest, type ApiResponse } from "../trpc/http";
import { handleApiDocsRequest } from "./api-docs";
import { handleGithubWebhook } from "../integrations/github/webhook";
import { maxBodyBytes } from "../config";
import { readBoundedNodeBody } from "./body";
import { handleMetricsRequest } from "./metrics";
import { handleOidcCallback, handleOidcLogin } from "./oidc";
import { attachPageContext } from "./page-context";
import { handleSessionRequest } from "./session";

/*
 * Every /api route, served straight from Node's HTTP server in front of Next
 * (scripts/start.ts, also with --dev and --api-only): an agent's call does not go through
 * Next's router, which cost about as much CPU per request as the API's own work
 * (BENCHMARKS.md). Next serves only the dashboard's pages (createRequestHandler).
 */

/** Headers next.config.js sets on every page; the API path bypasses Next, so they are set here. */
const SECURITY_HEADERS = { "x-content-type-options": "nosniff", "x-frame-options": "DENY", "referrer-policy": "no-referrer" };

function fetchHeadersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(key, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(key, item);
  }
  return headers;
}

/** Node's parsed headers, read as a Fetch Headers object reads them (names lower case, repeats joined). */
const headerReader = (req: IncomingMessage) => ({
  get(name: string): string | null {
    const value = req.headers[name];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  },
});

const fromResponse = (response: Response): ApiResponse => ({ status: response.status, headers: Object.fromEntries(response.headers), body: response.body });

/** healthResponse's answer as plain text: orchestrators poll these often. */
const health = (report: HealthReport): ApiResponse => ({
  status: report.status,
  headers: { "content-type": "application/json", "cache-control": "no-store" },
  body: JSON.stringify(report.body),
});

/** An answer, and for a Slack interaction the work that follows its acknowledgement (and cookies: a Fetch response may set several). */
type RoutedResponse = ApiResponse & { afterwards?: (() => Promise<void>) | null; cookies?: string[] };

type Answer = (instance: Instance, req: IncomingMessage, url: URL, signal: AbortSignal) => Promise<RoutedResponse> | RoutedResponse;

/** A Fetch Request of `req`, its body read first (at most WORK_GRAPH_MAX_BODY_BYTES; the handlers apply their own, smaller limits). */
async function fetchRequestOf(req: IncomingMessage, url: URL, signal: AbortSignal): Promise<Request> {
  const method = req.method ?? "GET";
  const body = method === "GET" || method === "HEAD" ? undefined : ((await readBoundedNodeBody(req, maxBodyBytes())) ?? undefined);
  return new Request(url, { method, headers: fetchHeadersOf(req), body, signal });
}

/** A route written as a Fetch handler (the dashboard's session and sign-in). */
const fetchRoute = (handler: (db: Instance["db"], request: Request) => Promise<Response>): Answer =>
  async (instance, req, url, signal) => {
    const response = await handler(instance.db, await fetchRequestOf(req, url, signal));
    const answer = fromResponse(response);
    // They answer with the signed-in caller's session, or send the browser on: never cached.
    answer.headers["cache-control"] = "no-store";
    return { ...answer, cookies: response.headers.getSetCookie() };
  };

/** The one route table: every path the API answers. */
const ROUTES: { path: string; withSubpaths?: true; answer: Answer }[] = [
  { path: "/api/health/live", answer: () => health(liveness()) },
  { path: "/api/health/ready", answer: async (instance) => health(await readiness(instance)) },
  {
    path: SLACK_INTERACTIONS_PATH,
    answer: async (instance, req) => {
      const { response, afterwards } = await handleSlackInteraction(instance.db, { headers: headerReader(req), readBody: (limit) => readBoundedNodeBody(req, limit) });
      return { ...fromResponse(response), afterwards };
    },
  },
  { path: "/api/openapi.json", answer: (_instance, req, url) => handleApiDocsRequest(req.method ?? "GET", url.pathname) },
  { path: "/api/docs", withSubpaths: true, answer: (_instance, req, url) => handleApiDocsRequest(req.method ?? "GET", url.pathname) },
  {
    path: "/api/integrations/github/webhook",
    answer: (instance, req) =>
      handleGithubWebhook(instance.db, { method: req.method ?? "GET", headers: headerReader(req), readBody: (limit) => readBoundedNodeBody(req, limit) }),
  },
  {
    path: "/api/metrics",
    answer: async (instance, req, url, signal) => fromResponse(await handleMetricsRequest(instance.db, new Request(url, { method: req.method, headers: fetchHeadersOf(req), signal }))),
  },
  { path: "/api/session", answer: fetchRoute(handleSessionRequest) },
  { path: "/api/auth/oidc/login", answer: fetchRoute(handleOidcLogin) },
  { path: "/api/auth/oidc/callback", answer: fetchRoute(handleOidcCallback) },
  {
    path: "/api/trpc",
    withSubpaths: true,
    // No Fetch Request and no web stream for the body: the tRPC handler reads it straight from
    // the socket, after authentication and at most WORK_GRAPH_MAX_BODY_BYTES.
    answer: (instance, req, url, signal) =>
      handleTrpcRequest(instance, {
        url: url.href,
        method: req.method ?? "GET",
        headers: headerReader(req),
        fetchHeaders: () => fetchHeadersOf(req),
        signal,
        readBody: (limit) => readBoundedNodeBody(req, limit),
      }),
  },
];

const pathnameOf = (url: string | undefined) => new URL(url ?? "/", "http://localhost").pathname;
const routeOf = (pathname: string) =>
  ROUTES.find((route) => pathname === route.path || (route.withSubpaths && pathname.startsWith(`${route.path}/`)));

/** The paths of the route table (those with subpaths serve everything below them too). */
export const API_PATHS = ROUTES.map((route) => route.path);

/** Whether `handleNodeApi` answers this request; everything else goes to Next. */
export const servesApi = (url: string | undefined): boolean => routeOf(pathnameOf(url)) !== undefined;

/**
 * Answers one API request on `instance`; a client that goes away before its answer is complete
 * aborts it (waiting claims and event streams stop).
 */
export async function handleNodeApi(instance: Instance, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  const route = routeOf(url.pathname);
  const response: RoutedResponse = route ? await route.answer(instance, req, url, gone.signal) : notFound;
  const cookies = response.cookies?.length ? { "set-cookie": response.cookies } : {};
  res.writeHead(response.status, { ...SECURITY_HEADERS, ...response.headers, ...cookies });
  if (typeof response.body === "string" || response.body === null) {
    res.end(response.body ?? undefined);
    await response.afterwards?.();
    return;
  }
  // Streamed, not buffered: events.stream (Server-Sent Events) never ends by itself.
  const reader = response.body.getReader();
  for (let chunk = await reader.read(); !chunk.done && !res.destroyed; chunk = await reader.read()) {
    if (!res.write(chunk.value)) await new Promise((resolve) => { res.once("drain", resolve); res.once("close", resolve); });
  }
  if (res.destroyed) await reader.cancel().catch(() => {});
  res.end();
  await response.afterwards?.();
}

const notFound: ApiResponse = {
  status: 404,
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ reason: "NOT_FOUND", message: `this server runs with --api-only: only ${API_PATHS.join(", ")} exist` }),
};

/**
 * The server's request handler: the API from the route table; every other path to Next's
 * `pages` handler with the page context attached (server/http/page-context.ts), or, without
 * Next (`--api-only`), a 404 that says why.
 */
export function createRequestHandler(instance: Instance, pages: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | null) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const pathname = pathnameOf(req.url);
    if (!pages || routeOf(pathname)) return handleNodeApi(instance, req, res);
    await attachPageContext(instance, req, pathname);
    return pages(req, res);
  };
}
