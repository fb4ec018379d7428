import { endSessionUrl, oidcProvider } from "../auth/oidc";
import { createSession, DASHBOARD_ROLES, endSession, SESSION_SECONDS, sessionCaller } from "../auth/sessions";
import { authenticate } from "../auth/tokens";
import { tokenLoginEnabled } from "../config";
import type { Db } from "../db";
import { noteDatabaseUp } from "../database/availability";
import { CSRF_HEADER } from "@work-graph/contract";
import { cookieValue, SESSION_COOKIE } from "../trpc/init";
import { readBoundedBody } from "./body";
import { setCookie } from "./cookies";
import { isHttps } from "./https";
import { failureResponse } from "./unavailable";

/** A login body holds one token (tokens are under 100 characters). */
const LOGIN_BODY_BYTES = 4096;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const json = (status: number, body: Record<string, unknown>) =>
  Response.json(body, { status, headers: { "cache-control": "no-store" } });

/**
 * Same-origin check for the session endpoints: the dashboard's own fetch sends CSRF_HEADER,
 * which a cross-site form cannot add and a cross-site fetch cannot send without CORS.
 */
function refuseCrossSite(request: Request): Response | null {
  if (request.headers.get(CSRF_HEADER) === "1") return null;
  return json(403, { reason: "FORBIDDEN", message: `missing ${CSRF_HEADER} header` });
}

/**
 * Log in: `{ token }` → a server-side session for a live operator or admin token; the httpOnly
 * cookie carries only the session id (the token itself never goes back to the browser).
 */
/** POST /api/session logs in, DELETE logs out. */
export async function handleSessionRequest(db: Db, request: Request): Promise<Response> {
  if (request.method !== "POST" && request.method !== "DELETE") return json(405, { reason: "VALIDATION", message: "use POST to log in or DELETE to log out" });
  const refused = refuseCrossSite(request);
  if (refused) return refused;
  // The database down (or any other failure): 503 UNAVAILABLE (or a generic 500), never a bare 500 or error text.
  return (request.method === "POST" ? logIn(db, request) : logOut(db, request)).catch((error: unknown) => failureResponse(error, "/api/session"));
}

async function logIn(db: Db, request: Request): Promise<Response> {
  if (!tokenLoginEnabled()) {
    return json(403, { reason: "FORBIDDEN", message: "Token login is off here (WORK_GRAPH_TOKEN_LOGIN=off): sign in with the identity provider." });
  }
  const raw = await readBoundedBody(request, LOGIN_BODY_BYTES).catch(() => null);
  if (!raw) return json(413, { reason: "TOO_LARGE", message: "The login request is too large." });
  const body = parseJson(raw.toString("utf8")) as { token?: unknown } | null;
  const token = typeof body?.token === "string" ? body.token.trim() : "";
  if (!token) return json(400, { reason: "VALIDATION", message: "Paste a token to log in." });
  if (token.length > 500) return json(401, { reason: "UNAUTHENTICATED", message: "That token is not valid." });
  const caller = await authenticate(db, token);
  noteDatabaseUp();
  if (!caller) {
    return json(401, { reason: "UNAUTHENTICATED", message: "That token is not valid: it is unknown or has been revoked." });
  }
  if (!DASHBOARD_ROLES.has(caller.role)) {
    return json(403, {
      reason: "FORBIDDEN",
      message: `That is an agent token (worker ${caller.workerId}). The dashboard is for people: use an operator or admin token.`,
    });
  }
  const sessionId = await createSession(db, caller.tokenId);
  const response = json(200, { role: caller.role, actor: caller.actor });
  setCookie(response.headers, SESSION_COOKIE, sessionId, {
    httpOnly: true,
    sameSite: "strict",
    path: "/",
    secure: isHttps(request),
    maxAge: SESSION_SECONDS,
  });
  return response;
}

/**
 * Log out: deletes the session (a copied cookie stops working too) and clears the cookie.
 * `redirect` is where the browser goes next: for a signed-in person the provider's end-session
 * URL when it has one (ending the sign-in there too), else /login.
 */
async function logOut(db: Db, request: Request): Promise<Response> {
  const sessionId = cookieValue(request.headers.get("cookie"), SESSION_COOKIE);
  const caller = sessionId ? await sessionCaller(db, sessionId) : null;
  if (sessionId) await endSession(db, sessionId);
  const provider = caller?.person ? await oidcProvider() : null;
  const redirect = provider?.status === "ready" ? endSessionUrl(provider.configuration) : "/login";
  const response = json(200, { ok: true, redirect });
  setCookie(response.headers, SESSION_COOKIE, "", { httpOnly: true, sameSite: "strict", path: "/", secure: isHttps(request), maxAge: 0 });
  return response;
}
