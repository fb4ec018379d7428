import { NextResponse } from "next/server";
import { isHttps } from "@/app/_lib/https";
import { finishSignIn, oidcProvider, STATE_COOKIE } from "@/server/auth/oidc";
import { createPersonSession, SESSION_SECONDS } from "@/server/auth/sessions";
import { publicUrl } from "@/server/config";
import { nextInstance } from "@/app/_lib/instance";
import { failureResponse } from "@/server/http/unavailable";
import { cookieValue, SESSION_COOKIE } from "@/server/trpc/init";

export const dynamic = "force-dynamic";

/**
 * The provider's redirect back: a session for the person it vouched for, or /login/refused
 * saying why. The state cookie is cleared either way (a sign-in is used once).
 */
export async function GET(request: Request) {
  return callback(request).catch((error: unknown) => failureResponse(error, "/api/auth/oidc/callback"));
}

async function callback(request: Request): Promise<NextResponse> {
  const provider = await oidcProvider();
  if (provider.status !== "ready") return NextResponse.redirect(`${publicUrl()}/login`, 303);
  const url = new URL(request.url);
  const result = await finishSignIn(nextInstance().db, provider.configuration, url, cookieValue(request.headers.get("cookie"), STATE_COOKIE));
  let response: NextResponse;
  if (result.ok) {
    const sessionId = await createPersonSession(nextInstance().db, result.person.id);
    // A page, not a redirect: the session cookie is SameSite=strict, and a redirect that follows the
    // provider's cross-site one would still count as cross-site and arrive without it.
    response = new NextResponse(
      '<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/"><title>Signed in</title><a href="/">Signed in: continue to Work Graph</a>',
      { status: 200, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } },
    );
    response.cookies.set(SESSION_COOKIE, sessionId, { httpOnly: true, sameSite: "strict", path: "/", secure: isHttps(request), maxAge: SESSION_SECONDS });
  } else {
    response = NextResponse.redirect(`${publicUrl()}/login/refused?reason=${result.refusal}`, 303);
  }
  response.cookies.set(STATE_COOKIE, "", { httpOnly: true, sameSite: "lax", path: "/api/auth/oidc", secure: isHttps(request), maxAge: 0 });
  return response;
}
