import { NextResponse } from "next/server";
import { isHttps } from "@/app/_lib/https";
import { beginSignIn, oidcProvider, SIGN_IN_SECONDS, STATE_COOKIE } from "@/server/auth/oidc";
import { publicUrl } from "@/server/config";
import { nextInstance } from "@/app/_lib/instance";
import { failureResponse } from "@/server/http/unavailable";

export const dynamic = "force-dynamic";

/** "Sign in with …": off to the identity provider, the state cookie set; sign-in off or unavailable: back to /login, which says so. */
export async function GET(request: Request) {
  return signIn(request).catch((error: unknown) => failureResponse(error, "/api/auth/oidc/login"));
}

async function signIn(request: Request): Promise<NextResponse> {
  const provider = await oidcProvider();
  if (provider.status !== "ready") return NextResponse.redirect(`${publicUrl()}/login`, 303);
  const { url, state } = await beginSignIn(nextInstance().db, provider.configuration);
  const response = NextResponse.redirect(url, 303);
  // Lax, not strict: the provider's redirect back to the callback is a cross-site navigation.
  response.cookies.set(STATE_COOKIE, state, {
    httpOnly: true,
    sameSite: "lax",
    path: "/api/auth/oidc",
    secure: isHttps(request),
    maxAge: SIGN_IN_SECONDS,
  });
  return response;
}
