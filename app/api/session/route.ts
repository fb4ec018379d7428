import { NextResponse } from "next/server";
import { createSession, endSession, SESSION_SECONDS, sessionCaller } from "@/server/auth/sessions";
import { authenticate } from "@/server/auth/tokens";
import { noteDatabaseUp } from "@/server/database/availability";
import { getDb } from "@/server/db";
import { readBoundedBody } from "@/server/http/body";
import { failureResponse } from "@/server/http/unavailable";
import { CSRF_HEADER } from "@work-graph/contract";
import { cookieValue, SESSION_COOKIE } from "@/server/trpc/init";
import { isHttps } from "@/app/_lib/https";
import { DASHBOARD_ROLES } from "@/app/_lib/session";
import { tokenLoginEnabled } from "@/server/config";
import { endSessionUrl, oidcProvider } from "@/server/auth/oidc";

export const dynamic = "force-dynamic";

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
  NextResponse.json(body, { status, headers: { "cache-control": "no-store" } });

/**
 * Same-origin check for the session endpoints: the dashboard's own fetch sends CSRF_HEADER,
 * which a cross-site form cannot add and a cross-site fetch cannot send without CORS.
 */
function refuseCrossSite(request: Request): NextResponse | null {
  if (request.headers.get(CSRF_HEADER) === "1") return null;
  return json(403, { reason: "FORBIDDEN", message: `missing ${CSRF_HEADER} header` });
}

/**
 * Log in: `{ token }` → a server-side session for a live operator or admin token; the httpOnly
 * cookie carries only the session id (the token itself never goes back to the browser).
 */
export async function POST(request: Request) {
  const refused = refuseCrossSite(request);
  if (refused) return refused;
  // The database down (or any other failure): 503 UNAVAILABLE (or a generic 500), never Next's bare 500 or error text.
  return logIn(request).catch((error: unknown) => failureResponse(error, "/api/session"));
}

async function logIn(request: Request): Promise<NextResponse> {
  if (!tokenLoginEnabled()) {
    return json(403, { reason: "FORBIDDEN", message: "Token login is off here (WORK_GRAPH_TOKEN_LOGIN=off): sign in with the identity provider." });
  }
  const raw = await readBoundedBody(request, LOGIN_BODY_BYTES).catch(() => null);
  if (!raw) return json(413, { reason: "TOO_LARGE", message: "The login request is too large." });
  const body = parseJson(raw.toString("utf8")) as { token?: unknown } | null;
  const token = typeof body?.token === "string" ? body.token.trim() : "";
  if (!token) return json(400, { reason: "VALIDATION", message: "Paste a token to log in." });
  if (token.length > 500) return json(401, { reason: "UNAUTHENTICATED", message: "That token is not valid." });
  const caller = await authenticate(getDb(), token);
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
  const sessionId = await createSession(getDb(), caller.tokenId);
  const response = json(200, { role: caller.role, actor: caller.actor });
  response.cookies.set(SESSION_COOKIE, sessionId, {
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
export async function DELETE(request: Request) {
  const refused = refuseCrossSite(request);
  if (refused) return refused;
  return logOut(request).catch((error: unknown) => failureResponse(error, "/api/session"));
}

async function logOut(request: Request): Promise<NextResponse> {
  const sessionId = cookieValue(request.headers.get("cookie"), SESSION_COOKIE);
  const caller = sessionId ? await sessionCaller(getDb(), sessionId) : null;
  if (sessionId) await endSession(getDb(), sessionId);
  const provider = caller?.person ? await oidcProvider() : null;
  const redirect = provider?.status === "ready" ? endSessionUrl(provider.configuration) : "/login";
  const response = json(200, { ok: true, redirect });
  response.cookies.set(SESSION_COOKIE, "", { httpOnly: true, sameSite: "strict", path: "/", secure: isHttps(request), maxAge: 0 });
  return response;
}
