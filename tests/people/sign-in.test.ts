import { afterAll, beforeAll, describe, expect } from "vitest";
import { oidcProvider } from "../../server/auth/oidc";
import { createToken } from "../../server/auth/tokens";
import { CSRF_HEADER } from "@work-graph/contract";
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

  it("an operator group member is an operator; an account in no group is refused with a page that says why and whom to ask", async ({ database }) => {
    app.use(database);
    const omar = await signIn("omar");
    expect((await call("people.me", undefined, { session: omar.session }, "query")).data).toMatchObject({ role: "operator", actor: "person:omar@example.com" });
    expect((await call("people.list", undefined, { session: omar.session }, "query")).reason).toBe("FORBIDDEN");

    const nora = await signIn("nora");
    expect(refusalOf(nora.landed)).toBe("no_group");
    expect(nora.session).toBeUndefined();
    const sql = await database.connect();
    expect((await sql.query("SELECT count(*)::int AS n FROM people WHERE subject = 'nora-003'")).rows[0].n).toBe(0);
  });

  it("refuses a tampered state, a replayed callback, a callback without the browser's state cookie", async ({ database }) => {
    app.use(database);
    const browser = new Browser();
    const callback = new URL(await throughProvider(browser, "dana"));
    const state = browser.cookie(app.url, STATE_COOKIE)!;
    const tampered = new URL(callback);
    tampered.searchParams.set("state", `${state.slice(0, -2)}xy`);
    expect(refusalOf(await browser.request(tampered.href))).toBe("invalid");

    // The genuine callback, from another browser (no state cookie): refused too.
    expect(refusalOf(await new Browser().request(callback.href))).toBe("invalid");

    // Replayed: the same callback with the same state cookie, after it was used once.
    const first = await fetch(callback, { redirect: "manual", headers: { cookie: `${STATE_COOKIE}=${state}` } });
    expect(first.status).toBe(200);
    const replay = await fetch(callback, { redirect: "manual", headers: { cookie: `${STATE_COOKIE}=${state}` } });
    expect(refusalOf({ status: replay.status, location: replay.headers.get("location") })).toBe("expired");
    expect(replay.headers.getSetCookie().some((cookie) => cookie.startsWith(`${SESSION_COOKIE}=`) && !cookie.startsWith(`${SESSION_COOKIE}=;`))).toBe(false);
  });

  it.for([
    ["a wrong nonce", (claims: Record<string, unknown>) => ({ ...claims, nonce: "not-the-one-sent" })] as const,
    ["an ID token for another audience", (claims: Record<string, unknown>) => ({ ...claims, aud: "someone-else" })] as const,
    ["an expired ID token", (claims: Record<string, unknown>) => ({ ...claims, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 })] as const,
  ])("refuses %s (the provider's own key signed it)", async ([, change], { database }) => {
    app.use(database);
    const sql = await database.connect();
    const before = (await sql.query("SELECT count(*)::int AS n FROM dashboard_sessions")).rows[0].n;
    const browser = new Browser();
    const callback = await throughProvider(browser, "omar");
    provider.tamperIdToken(change);
    const landed = await browser.request(callback);
    expect(refusalOf(landed)).toBe("provider");
    expect(browser.cookie(app.url, SESSION_COOKIE)).toBeUndefined();
    expect((await sql.query("SELECT count(*)::int AS n FROM dashboard_sessions")).rows[0].n).toBe(before);
  });
});

describe("a signed-in person's actions", () => {
  it("answering an attention request records the person: resolvedBy, resolvedByName and the event's actor", async ({ database, people }) => {
    app.use(database);
    await people.operator.workItems.create({ id: "deploy", title: "Deploy" });
    const worker = await people.agent("w1");
    const claimed = (await worker.leases.claim({ workItemId: "deploy", durationSeconds: 600 }))!;
    const { request } = await worker.attention.request({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, kind: "decision", question: "Ship it?" });

    const { session } = await signIn("dana");
    const answered = await call("attention.resolve", { id: request.id, resolution: "Yes" }, { session });
    expect(answered.status).toBe(200);
    expect(answered.data).toMatchObject({ request: { status: "resolved", resolvedBy: "person:dana@example.com", resolvedByName: "Dana Li" } });
    const events = await call("events.list", { workItemId: "deploy" }, { session }, "query");
    const resolved = (events.data as { items: { type: string; actor: string; actorName: string | null }[] }).items.find((event) => event.type === "attention.resolved");
    expect(resolved).toMatchObject({ actor: "person:dana@example.com", actorName: "Dana Li" });
    // An agent's event has no person behind it.
    expect((events.data as { items: { type: string; actorName: string | null }[] }).items.find((event) => event.type === "lease.claimed")?.actorName).toBeNull();

    // Drained by a person: the worker says who.
    await call("workers.drain", { workerId: "w1", reason: "maintenance" }, { session });
    const workers = await call("workers.list", {}, { session }, "query");
    expect((workers.data as { workerId: string; drainedBy: string | null; drainedByName: string | null }[]).find((w) => w.workerId === "w1"))
      .toMatchObject({ drainedBy: "person:dana@example.com", drainedByName: "Dana Li" });
  });

  it("a personal token acts as the person, is listed and revocable by them, never above operator", async ({ database }) => {
    app.use(database);
    const { session } = await signIn("dana");
    const created = await call("people.createToken", { label: "dana's laptop" }, { session });
    expect(created.status).toBe(200);
    const { id, token } = created.data as { id: string; token: string };
    expect(token).toMatch(/^wgo_/);
    expect((await call("people.me", undefined, { token }, "query")).data).toMatchObject({ role: "operator", actor: "person:dana@example.com", person: { name: "Dana Li" } });
    await call("workItems.create", { id: "cli-made", title: "From the CLI" }, { token });
    const events = await call("events.list", { workItemId: "cli-made" }, { token }, "query");
    expect((events.data as { items: { actor: string; actorName: string }[] }).items[0]).toMatchObject({ actor: "person:dana@example.com", actorName: "Dana Li" });
    // A token cannot mint personal tokens (they are for people who signed in).
    expect((await call("people.createToken", {}, { token })).reason).toBe("FORBIDDEN");

    const mine = await call("people.tokens", {}, { session }, "query");
    expect(mine.data).toEqual([expect.objectContaining({ id, role: "operator", label: "dana's laptop", revokedAt: null, personName: "Dana Li" })]);
    // Another person neither sees nor revokes it.
    const omar = await signIn("omar");
    expect((await call("people.tokens", {}, { session: omar.session }, "query")).data).toEqual([]);
    expect((await call("people.revokeToken", { id }, { session: omar.session })).reason).toBe("NOT_FOUND");
    expect((await call("people.revokeToken", { id }, { session })).status).toBe(200);
    expect((await call("people.me", undefined, { token }, "query")).status).toBe(401);
  });

  it("disabling a person ends their sessions at the next request and revokes their personal tokens; enabling lets them sign in again", async ({ database, people }) => {
    app.use(database);
    const omar = await signIn("omar");
    const { token } = (await call("people.createToken", {}, { session: omar.session })).data as { token: string };
    const person = (await people.admin.people.list()).find((candidate) => candidate.subject === "omar-002")!;
    expect((await call("workItems.list", {}, { session: omar.session }, "query")).status).toBe(200);

    expect(await people.admin.people.disable({ id: person.id })).toMatchObject({ id: person.id, disabledAt: expect.any(String) });
    expect((await call("workItems.list", {}, { session: omar.session }, "query")).reason).toBe("UNAUTHENTICATED");
    expect((await call("workItems.list", {}, { token }, "query")).reason).toBe("UNAUTHENTICATED");
    expect(refusalOf((await signIn("omar")).landed)).toBe("disabled");

    await people.admin.people.enable({ id: person.id });
    const again = await signIn("omar");
    expect((await call("workItems.list", {}, { session: again.session }, "query")).status).toBe(200);
    // Revoked tokens stay revoked.
    expect((await call("workItems.list", {}, { token }, "query")).reason).toBe("UNAUTHENTICATED");
    // Only admins manage people.
    expect((await call("people.disable", { id: person.id }, { session: again.session })).reason).toBe("FORBIDDEN");
  });

  it("a known person whom the provider now puts in no group is refused, and loses their sessions and personal tokens", async ({ database }) => {
    app.use(database);
    const ana = { sub: "ana-004", email: "ana@example.com", name: "Ana Silva", groups: [OPERATOR_GROUP] };
    ACCOUNTS.ana = ana;
    try {
      const first = await signIn("ana");
      const { token } = (await call("people.createToken", {}, { session: first.session })).data as { token: string };
      ana.groups = ["staff"];
      expect(refusalOf((await signIn("ana")).landed)).toBe("no_group");
      expect((await call("workItems.list", {}, { session: first.session }, "query")).reason).toBe("UNAUTHENTICATED");
      expect((await call("workItems.list", {}, { token }, "query")).reason).toBe("UNAUTHENTICATED");
    } finally {
      delete ACCOUNTS.ana;
    }
  });

  it("logout ends the session and sends the browser to the provider's end-session endpoint", async ({ database }) => {
    app.use(database);
    const { session } = await signIn("dana");
    const response = await fetch(`${app.url}/api/session`, { method: "DELETE", headers: { [CSRF_HEADER]: "1", cookie: `${SESSION_COOKIE}=${session}` } });
    const body = (await response.json()) as { redirect: string };
    const end = new URL(body.redirect);
    expect(`${end.origin}${end.pathname}`).toBe(`${provider.issuer}/session/end`);
    expect(end.searchParams.get("post_logout_redirect_uri")).toBe(`${app.url}/login`);
    expect((await call("workItems.list", {}, { session }, "query")).status).toBe(401);
  });
});

describe("token login next to sign-in", () => {
  it("WORK_GRAPH_TOKEN_LOGIN=off refuses pasted tokens at /api/session; on, they work as before", async ({ database }) => {
    app.use(database);
    const { token } = await createToken(database.db, { role: "operator", label: "break-glass" });
    const logIn = () => fetch(`${app.url}/api/session`, { method: "POST", headers: { "content-type": "application/json", [CSRF_HEADER]: "1" }, body: JSON.stringify({ token }) });
    expect((await logIn()).status).toBe(200);
    process.env.WORK_GRAPH_TOKEN_LOGIN = "off";
    try {
      const refused = await logIn();
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { message: string }).message).toContain("WORK_GRAPH_TOKEN_LOGIN=off");
    } finally {
      delete process.env.WORK_GRAPH_TOKEN_LOGIN;
    }
  });

  it("an issuer that cannot be discovered leaves sign-in unavailable (remembered for a while), not the server", async ({ database }) => {
    app.use(database);
    const issuer = process.env.WORK_GRAPH_OIDC_ISSUER;
    process.env.WORK_GRAPH_OIDC_ISSUER = "http://127.0.0.1:9/no-provider-here";
    try {
      expect(await oidcProvider()).toEqual({ status: "unavailable", name: "127.0.0.1" });
      const started = await new Browser().request(`${app.url}/api/auth/oidc/login`);
      expect(started.location).toBe(`${app.url}/login`);
    } finally {
      process.env.WORK_GRAPH_OIDC_ISSUER = issuer;
    }
    expect((await oidcProvider()).status).toBe("ready");
  });
});
