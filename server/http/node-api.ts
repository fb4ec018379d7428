import type { IncomingMessage, ServerResponse } from "node:http";
import { getDb, type Db } from "../db";
import { liveness, readiness, type HealthReport } from "../health";
import { handleSlackInteraction, SLACK_INTERACTIONS_PATH } from "../integrations/slack/interactions";
import { handleTrpcRequest, type ApiResponse } from "../trpc/http";
import { handleApiDocsRequest, servesApiDocs } from "./api-docs";
import { handleGithubWebhook } from "../integrations/github/webhook";
import { readBoundedNodeBody } from "./body";
import { handleMetricsRequest } from "./metrics";

/**
 * The API served straight from Node's HTTP server, in front of Next (scripts/start.ts): an
 * agent's call does not go through Next's router, which cost about as much CPU per request as
 * the API's own work (BENCHMARKS.md). The routes call the same functions as the route handlers
 * in app/api/ (which stay for `next dev`), the Slack interactions endpoint included. `/api/session`
 * (the dashboard login) stays with Next.
 */
const API_PATH = /^\/api\/(trpc(\/|$)|health\/(live|ready)$|metrics$|openapi\.json(\?|$)|docs(\/|\?|$)|integrations\/slack\/interactions$|integrations\/github\/webhook$)/;

/** Whether `handleNodeApi` answers this request; everything else goes to Next. */
export const servesApi = (url: string | undefined): boolean => API_PATH.test(url ?? "");

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

/** An answer, and for a Slack interaction the work that follows its acknowledgement. */
type RoutedResponse = ApiResponse & { afterwards?: (() => Promise<void>) | null };

async function route(db: Db, req: IncomingMessage, url: URL, signal: AbortSignal): Promise<RoutedResponse> {
  if (url.pathname === "/api/health/live") return health(liveness());
  if (url.pathname === SLACK_INTERACTIONS_PATH) {
    const { response, afterwards } = await handleSlackInteraction(db, { headers: headerReader(req), readBody: (limit) => readBoundedNodeBody(req, limit) });
    return { ...fromResponse(response), afterwards };
  }
  if (url.pathname === "/api/health/ready") return health(await readiness(db));
  if (servesApiDocs(url.pathname)) return handleApiDocsRequest(req.method ?? "GET", url.pathname);
  if (url.pathname === "/api/integrations/github/webhook") {
    return handleGithubWebhook(db, { method: req.method ?? "GET", headers: headerReader(req), readBody: (limit) => readBoundedNodeBody(req, limit) });
  }
  if (url.pathname === "/api/metrics") return fromResponse(await handleMetricsRequest(db, new Request(url, { method: req.method, headers: fetchHeadersOf(req), signal })));
  // No Fetch Request and no web stream for the body: the tRPC handler reads it straight from
  // the socket, after authentication and at most WORK_GRAPH_MAX_BODY_BYTES.
  return handleTrpcRequest(db, {
    url: url.href,
    method: req.method ?? "GET",
    headers: headerReader(req),
    fetchHeaders: () => fetchHeadersOf(req),
    signal,
    readBody: (limit) => readBoundedNodeBody(req, limit),
  });
}

/**
 * Answers one API request on `db` (the process-wide client unless given; the tests pass their
 * own); a client that goes away before its answer is complete aborts it (waiting claims and
 * event streams stop).
 */
export async function handleNodeApi(req: IncomingMessage, res: ServerResponse, db: Db = getDb()): Promise<void> {
  const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  const response = await route(db, req, url, gone.signal);
  res.writeHead(response.status, { ...SECURITY_HEADERS, ...response.headers });
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

/** `npm start -- --api-only`: only the API; any other path is a 404 that says why. */
export async function handleApiOnly(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (servesApi(req.url)) return handleNodeApi(req, res);
  const body = JSON.stringify({ reason: "NOT_FOUND", message: "this server runs with --api-only: only /api/trpc, /api/health/*, /api/metrics, /api/openapi.json, /api/docs, /api/integrations/slack/interactions and /api/integrations/github/webhook exist" });
  res.writeHead(404, { ...SECURITY_HEADERS, "content-type": "application/json" });
  res.end(body);
}
