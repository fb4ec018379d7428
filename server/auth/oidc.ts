import { createHash } from "node:crypto";
import * as oidc from "openid-client";
import { oidcSettings, publicUrl } from "../config";
import type { Db } from "../db";
import { logger } from "../log";
import { insertOidcLogin, takeOidcLogin } from "../sql/people";
import type { Person } from "@work-graph/contract";
import { refuseUngroupedPerson, signInPerson } from "./people";

/*
 * OpenID Connect sign-in with openid-client (a certified relying party): discovery, the
 * authorization code flow with PKCE (S256), state and nonce, ID token validation (issuer,
 * audience, expiry, nonce, signature from the provider's JWKS), userinfo when the role claim is
 * not in the ID token. The state, verifier and nonce of a sign-in under way live in
 * oidc_logins, used once: a replayed callback finds nothing. The state also goes to the
 * browser in a cookie, and the callback must come back with the same one (no login CSRF).
 */

export const CALLBACK_PATH = "/api/auth/oidc/callback";
/** The httpOnly cookie that binds a sign-in under way to the browser that started it. */
export const STATE_COOKIE = "wg_oidc_state";
/** How long a person has to sign in at the provider. */
export const SIGN_IN_SECONDS = 10 * 60;
/** How long a failed discovery is remembered before the provider is asked again. */
const DISCOVERY_RETRY_MS = 30_000;
const DISCOVERY_TIMEOUT_SECONDS = 5;
const SCOPES = ["openid", "email", "profile"];

/** The scopes asked for: the standard ones, plus one named like the role claim when the provider offers it (Dex, Okta: `groups`). */
function scopesFor(configuration: oidc.Configuration, roleClaim: string): string {
  const offered = configuration.serverMetadata().scopes_supported ?? [];
  return [...SCOPES, ...(offered.includes(roleClaim) && !SCOPES.includes(roleClaim) ? [roleClaim] : [])].join(" ");
}

export type Provider =
  | { status: "off" }
  | { status: "unavailable"; name: string }
  | { status: "ready"; name: string; configuration: oidc.Configuration };

let discovered: { key: string; at: number; provider: Promise<Provider> } | null = null;

/** What /login calls the provider: a known one by its issuer's host, else the host itself. */
export function providerName(issuer: string): string {
  const host = new URL(issuer).hostname;
  const known: [RegExp, string][] = [
    [/(^|\.)google\.com$/, "Google"],
    [/(^|\.)microsoftonline\.com$/, "Microsoft"],
    [/(^|\.)(okta|oktapreview)\.com$/, "Okta"],
  ];
  return known.find(([pattern]) => pattern.test(host))?.[1] ?? host;
}

const isLoopback = (url: URL) => ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);

async function discover(settings: NonNullable<ReturnType<typeof oidcSettings>>): Promise<Provider> {
  const name = providerName(settings.issuer);
  const issuer = new URL(settings.issuer);
  try {
    const configuration = await oidc.discovery(issuer, settings.clientId, settings.clientSecret, undefined, {
      timeout: DISCOVERY_TIMEOUT_SECONDS,
      // Plain http only to a provider on this machine (development, tests); anywhere else https.
      execute: issuer.protocol === "http:" && isLoopback(issuer) ? [oidc.allowInsecureRequests] : [],
    });
    return { status: "ready", name, configuration };
  } catch (error) {
    logger().warn({ issuer: settings.issuer, error: (error as Error).message }, "OpenID Connect discovery failed: sign-in is unavailable");
    return { status: "unavailable", name };
  }
}

/**
 * The configured provider, discovered once. A provider that cannot be discovered does not stop
 * the server: sign-in is unavailable (token login still works) and discovery is tried again
 * DISCOVERY_RETRY_MS later.
 */
export async function oidcProvider(): Promise<Provider> {
  const settings = oidcSettings();
  if (!settings) return { status: "off" };
  const key = JSON.stringify([settings.issuer, settings.clientId, settings.clientSecret]);
  const now = performance.now();
  if (discovered && discovered.key === key) {
    const provider = await discovered.provider;
    if (provider.status === "ready" || now - discovered.at < DISCOVERY_RETRY_MS) return provider;
  }
  discovered = { key, at: now, provider: discover(settings) };
  return discovered.provider;
}

const hashState = (state: string) => createHash("sha256").update(state).digest("hex");
const redirectUri = () => `${publicUrl()}${CALLBACK_PATH}`;

/** Starts a sign-in: the provider's authorization URL and the state for the browser's cookie. */
export async function beginSignIn(db: Db, configuration: oidc.Configuration): Promise<{ url: URL; state: string }> {
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  await insertOidcLogin(db, { stateHash: hashState(state), codeVerifier, nonce }, SIGN_IN_SECONDS);
  const url = oidc.buildAuthorizationUrl(configuration, {
    redirect_uri: redirectUri(),
    scope: scopesFor(configuration, oidcSettings()!.roleClaim),
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    state,
    nonce,
  });
  return { url, state };
}

/** Why a sign-in was refused: each has its own sentence on /login/refused. */
export type Refusal = "invalid" | "expired" | "provider" | "no_group" | "disabled";

export type SignInResult = { ok: true; person: Person } | { ok: false; refusal: Refusal };

function stringClaim(claims: Record<string, unknown>, name: string): string | null {
  const value = claims[name];
  return typeof value === "string" && value.length > 0 ? value.slice(0, 300) : null;
}

/** The groups a claim lists: an array of names, or one name. Anything else: none. */
function groupsOf(value: unknown): string[] | null {
  if (Array.isArray(value)) return value.filter((group): group is string => typeof group === "string");
  if (typeof value === "string") return [value];
  return null;
}

/**
 * Completes a sign-in from the provider's redirect. `callback` is the request's URL (only its
 * query counts: the redirect URI is ours), `cookieState` the state cookie of the browser.
 */
export async function finishSignIn(db: Db, configuration: oidc.Configuration, callback: URL, cookieState: string | null): Promise<SignInResult> {
  const state = callback.searchParams.get("state");
  if (!state || !cookieState || state !== cookieState) return { ok: false, refusal: "invalid" };
  const login = await takeOidcLogin(db, hashState(state));
  if (!login) return { ok: false, refusal: "expired" };
  const settings = oidcSettings()!;
  let claims: Record<string, unknown>;
  try {
    const tokens = await oidc.authorizationCodeGrant(configuration, new URL(`${redirectUri()}${callback.search}`), {
      pkceCodeVerifier: login.codeVerifier,
      expectedState: state,
      expectedNonce: login.nonce,
      idTokenExpected: true,
    });
    claims = { ...tokens.claims()! };
    if (groupsOf(claims[settings.roleClaim]) === null || stringClaim(claims, "email") === null) {
      const userInfo = await oidc.fetchUserInfo(configuration, tokens.access_token, String(claims.sub));
      claims = { ...userInfo, ...claims, [settings.roleClaim]: claims[settings.roleClaim] ?? userInfo[settings.roleClaim] };
    }
  } catch (error) {
    logger().warn({ error: (error as Error).message, code: (error as { code?: unknown }).code }, "OpenID Connect sign-in refused");
    return { ok: false, refusal: "provider" };
  }
  const groups = groupsOf(claims[settings.roleClaim]) ?? [];
  const role = groups.some((group) => settings.adminGroups.includes(group))
    ? "admin"
    : settings.operatorGroups.length === 0 || groups.some((group) => settings.operatorGroups.includes(group))
      ? "operator"
      : null;
  const issuer = configuration.serverMetadata().issuer;
  if (role === null) {
    await refuseUngroupedPerson(db, issuer, String(claims.sub));
    return { ok: false, refusal: "no_group" };
  }
  const person = await signInPerson(db, {
    issuer,
    subject: String(claims.sub),
    email: stringClaim(claims, "email"),
    name: stringClaim(claims, "name") ?? stringClaim(claims, "preferred_username"),
    role,
  });
  return person ? { ok: true, person } : { ok: false, refusal: "disabled" };
}

/** Where logout sends the browser: the provider's end-session endpoint when it has one, else /login. */
export function endSessionUrl(configuration: oidc.Configuration | null): string {
  const back = `${publicUrl()}/login`;
  if (!configuration?.serverMetadata().end_session_endpoint) return back;
  return oidc.buildEndSessionUrl(configuration, { post_logout_redirect_uri: back }).href;
}
