import { beginSignIn, finishSignIn, oidcProvider, SIGN_IN_SECONDS, STATE_COOKIE } from "../auth/oidc";
import { createPersonSession, SESSION_SECONDS } from "../auth/sessions";
import { publicUrl } from "../config";
import type { Db } from "../db";
import { cookieValue, SESSION_COOKIE } from "../trpc/init";
import { redirectTo, setCookie } from "./cookies";
import { isHttps } from "./https";
import { failureResponse } from "./unavailable";

/** "Sign in with …": off to the identity provider, the state cookie set; sign-in off or unavailable: back to /login, which says so. */
export async function handleOidcLogin(db: Db, request: Request): Promise<Response> {
  return signIn(db, request).catch((error: unknown) => failureResponse(error, "/api/auth/oidc/login"));
}

async function signIn(db: Db, request: Request): Promise<Response> {
  const provider = await oidcProvider();
  if (provider.status !== "ready") return redirectTo(`${publicUrl()}/login`, 303);
  const { url, state } = await beginSignIn(db, provider.configuration);
  const response = redirectTo(url, 303);
  // Lax, not strict: the provider's redirect back to the callback is a cross-site navigation.
  setCookie(response.headers, STATE_COOKIE, state, {
    httpOnly: true,
    sameSite: "lax",
    path: "/api/auth/oidc",
    secure: isHttps(request),
    maxAge: SIGN_IN_SECONDS,
  });
  return response;
}

/**
 * The provider's redirect back: a session for the person it vouched for, or /login/refused
 * saying why. The state cookie is cleared either way (a sign-in is used once).
 */
export async function handleOidcCallback(db: Db, request: Request): Promise<Response> {
  return callback(db, request).catch((error: unknown) => failureResponse(error, "/api/auth/oidc/callback"));
}

async function callback(db: Db, request: Request): Promise<Response> {
  const provider = await oidcProvider();
  if (provider.status !== "ready") return redirectTo(`${publicUrl()}/login`, 303);
  const url = new URL(request.url);
  const result = await finishSignIn(db, provider.configuration, url, cookieValue(request.headers.get("cookie"), STATE_COOKIE));
  let response: Response;
  if (result.ok) {
    const sessionId = await createPersonSession(db, result.person.id);
    // A page, not a redirect: the session cookie is SameSite=strict, and a redirect that follows the
    // provider's cross-site one would still count as cross-site and arrive without it.
    response = new Response(
      '<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/"><title>Signed in</title><a href="/">Signed in: continue to Work Graph</a>',
      { status: 200, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } },
    );
    setCookie(response.headers, SESSION_COOKIE, sessionId, { httpOnly: true, sameSite: "strict", path: "/", secure: isHttps(request), maxAge: SESSION_SECONDS });
  } else {
    response = redirectTo(`${publicUrl()}/login/refused?reason=${result.refusal}`, 303);
  }
  setCookie(response.headers, STATE_COOKIE, "", { httpOnly: true, sameSite: "lax", path: "/api/auth/oidc", secure: isHttps(request), maxAge: 0 });
  return response;
}
