import { NextResponse } from "next/server";
import { authenticate } from "@/server/auth/tokens";
import { getDb } from "@/server/db";
import { CSRF_HEADER, SESSION_COOKIE } from "@/server/trpc/init";
import { DASHBOARD_ROLES } from "@/app/_lib/session";

export const dynamic = "force-dynamic";

/** A session lasts a working day; after that the token is pasted again. */
const SESSION_SECONDS = 12 * 60 * 60;

const json = (status: number, body: Record<string, unknown>) =>
  NextResponse.json(body, { status, headers: { "cache-control": "no-store" } });

/** Secure cookies only over https (directly, or behind a proxy that says so). */
function isHttps(request: Request): boolean {
  if (new URL(request.url).protocol === "https:") return true;
  return request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase() === "https";
}

/**
 * Same-origin check for the session endpoints: the dashboard's own fetch sends CSRF_HEADER,
 * which a cross-site form cannot add and a cross-site fetch cannot send without CORS.
 */
function refuseCrossSite(request: Request): NextResponse | null {
  if (request.headers.get(CSRF_HEADER) === "1") return null;
  return json(403, { reason: "FORBIDDEN", message: `missing ${CSRF_HEADER} header` });
}

/** Log in: `{ token }` → sets the httpOnly session cookie when it is a live operator or admin token. */
export async function POST(request: Request) {
  const refused = refuseCrossSite(request);
  if (refused) return refused;
  const body = (await request.json().catch(() => null)) as { token?: unknown } | null;
  const token = typeof body?.token === "string" ? body.token.trim() : "";
  if (!token) return json(400, { reason: "VALIDATION", message: "Paste a token to log in." });
  if (token.length > 500) return json(401, { reason: "UNAUTHENTICATED", message: "That token is not valid." });
  const caller = await authenticate(getDb(), token);
  if (!caller) {
    return json(401, { reason: "UNAUTHENTICATED", message: "That token is not valid: it is unknown or has been revoked." });
  }
  if (!DASHBOARD_ROLES.has(caller.role)) {
    return json(403, {
      reason: "FORBIDDEN",
      message: `That is an agent token (worker ${caller.workerId}). The dashboard is for people: use an operator or admin token.`,
    });
  }
  const response = json(200, { role: caller.role, actor: caller.actor });
  response.cookies.set(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: "strict",
    path: "/",
    secure: isHttps(request),
    maxAge: SESSION_SECONDS,
  });
  return response;
}

/** Log out: clears the session cookie. */
export async function DELETE(request: Request) {
  const refused = refuseCrossSite(request);
  if (refused) return refused;
  const response = json(200, { ok: true });
  response.cookies.set(SESSION_COOKIE, "", { httpOnly: true, sameSite: "strict", path: "/", secure: isHttps(request), maxAge: 0 });
  return response;
}
