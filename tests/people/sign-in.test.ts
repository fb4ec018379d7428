import { afterAll, beforeAll, describe, expect } from "vitest";
import { CSRF_HEADER } from "../../server/domain/contract";
import { SESSION_COOKIE } from "../../server/trpc/init";
import { databaseTest } from "../support/fixtures";
import { ACCOUNTS, ADMIN_GROUP, CLIENT_ID, OPERATOR_GROUP, startTestProvider, type TestProvider } from "../support/oidc-provider";
import { Browser, startSignInApp } from "./support";

/*
 * Issue 25: sign-in with the team's OpenID provider, over plain HTTP against a real
 * `oidc-provider` on loopback. The full flow (code + PKCE, state, nonce, userinfo for the
 * groups), roles from groups, refusals (tampered state, replayed callback, wrong nonce, an ID
 * token for another audience, an expired one, an account in no group), attribution of a
 * person's actions, disabling, personal tokens and logout at the provider.
 */

const it = databaseTest();

let app: Awaited<ReturnType<typeof startSignInApp>>;
let provider: TestProvider;
const STATE_COOKIE = "wg_oidc_state";

beforeAll(async () => {
  // The app's process-wide database client (getDb) and settings: plain process.env, kept for the whole file.
  app = await startSignInApp();
  provider = await startTestProvider(app.url);
  Object.assign(process.env, {
    WORK_GRAPH_PUBLIC_URL: app.url,
    WORK_GRAPH_OIDC_ISSUER: provider.issuer,
    WORK_GRAPH_OIDC_CLIENT_ID: CLIENT_ID,
    WORK_GRAPH_OIDC_CLIENT_SECRET: provider.clientSecret,
    WORK_GRAPH_OIDC_ADMIN_GROUPS: ADMIN_GROUP,
    WORK_GRAPH_OIDC_OPERATOR_GROUPS: OPERATOR_GROUP,
  });
});

afterAll(async () => {
  await provider?.close();
  await app?.close();
});

const callbackOf = (url: string) => url.startsWith(`${app.url}/api/auth/oidc/callback`);

/** Signs `login` in at the provider; answers the callback URL the provider sent the browser to (not yet requested). */
async function throughProvider(browser: Browser, login: keyof typeof ACCOUNTS): Promise<string> {
  const form = await browser.follow(`${app.url}/api/auth/oidc/login`);
  expect(form.status, form.text).toBe(200);
  const action = /action="([^"]+)"/.exec(form.text)?.[1];
  expect(action).toMatch(/^\/interaction\/[^/]+\/login$/);
  const posted = await browser.request(`${provider.issuer}${action}`, {
    method: "POST",
    body: `login=${login}`,
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  const back = posted.location ? await browser.follow(posted.location, callbackOf) : posted;
  const callback = back.location ?? "";
  expect(callbackOf(callback), back.text).toBe(true);
  return callback;
}

async function signIn(login: keyof typeof ACCOUNTS) {
  const browser = new Browser();
  const callback = await throughProvider(browser, login);
  const landed = await browser.request(callback);
  return { browser, callback, landed, session: browser.cookie(app.url, SESSION_COOKIE) };
}

const refusalOf = (hop: { status: number; location: string | null }) =>
  hop.status === 303 ? new URL(hop.location!).searchParams.get("reason") : `HTTP ${hop.status}`;

/** A tRPC call with a session cookie (and the dashboard's CSRF header) or a bearer token. */
async function call(path: string, input: unknown, auth: { session?: string; token?: string }, type: "query" | "mutation" = "mutation") {
  const headers: Record<string, string> = { "content-type": "application/json", [CSRF_HEADER]: "1" };
  if (auth.session) headers.cookie = `${SESSION_COOKIE}=${auth.session}`;
  if (auth.token) headers.authorization = `Bearer ${auth.token}`;
  const response =
    type === "query"
      ? await fetch(`${app.url}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input ?? {}))}`, { headers })
      : await fetch(`${app.url}/api/trpc/${path}`, { method: "POST", headers, body: JSON.stringify(input) });
  const body = (await response.json()) as { result?: { data: unknown }; error?: { data: { reason: string } } };
  return { status: response.status, data: body.result?.data as never, reason: body.error?.data.reason };
}

describe("sign-in with the identity provider", () => {
  it("signs an admin in: PKCE and state on the way out, a session for the person, groups from userinfo", async ({ database }) => {
    app.use(database);
    const browser = new Browser();
    const start = await browser.request(`${app.url}/api/auth/oidc/login`);
    expect(start.status).toBe(303);
    const authorize = new URL(start.location!);
    expect(authorize.origin).toBe(provider.issuer);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${app.url}/api/auth/oidc/callback`);
    expect(authorize.searchParams.get("nonce")).toBeTruthy();
    expect(browser.cookie(app.url, STATE_COOKIE)).toBe(authorize.searchParams.get("state"));

    const { landed, session } = await signIn("dana");
    expect(landed.status, landed.text).toBe(200);
    expect(landed.text).toContain('url=/"');
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const me = await call("people.me", undefined, { session }, "query");
    expect(me.data).toEqual({ person: { id: expect.any(String), name: "Dana Li" }, role: "admin", actor: "person:dana@example.com" });
    const people = await call("people.list", undefined, { session }, "query");
    expect(people.data).toEqual([
      expect.objectContaining({ issuer: provider.issuer, subject: "dana-001", email: "dana@example.com", name: "Dana Li", role: "admin", disabledAt: null }),
    ]);
  });
});

