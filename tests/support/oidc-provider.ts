import http from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT, type JWTPayload } from "jose";
import Provider from "oidc-provider";

/*
 * A real OpenID provider for the sign-in tests (issue 25): the certified `oidc-provider`
 * package on loopback, with one confidential client (Work Graph) and accounts in an admin group,
 * an operator group and no group. Its groups travel only in userinfo (the ID token carries
 * `sub`, as many providers do), so the relying party's userinfo path runs too.
 *
 * People sign in on a plain form at /interaction/<uid> (field "login", button "Sign in"); consent is
 * implicit (a first-party client). In front of the provider sits a pass-through proxy, the
 * issuer address: `tamperIdToken` makes it re-sign the next ID token the token endpoint returns
 * with changed claims (another audience, an old expiry, another nonce), with the provider's own
 * key, which the test holds.
 */

export interface Account {
  sub: string;
  email: string;
  name: string;
  groups: string[];
}

export const ACCOUNTS: Record<string, Account> = {
  dana: { sub: "dana-001", email: "dana@example.com", name: "Dana Li", groups: ["wg-admins"] },
  omar: { sub: "omar-002", email: "omar@example.com", name: "Omar Haddad", groups: ["wg-operators", "staff"] },
  nora: { sub: "nora-003", email: "nora@example.com", name: "Nora Vance", groups: ["staff"] },
};

export const ADMIN_GROUP = "wg-admins";
export const OPERATOR_GROUP = "wg-operators";
export const CLIENT_ID = "work-graph";

const listen = async (server: http.Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
};

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginForm(uid: string, error?: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test provider: sign in</title></head><body>
<h1>Test identity provider</h1>${error ? `<p role="alert">${escapeHtml(error)}</p>` : ""}
<form method="post" action="/interaction/${escapeHtml(uid)}/login">
<label for="login">Username</label> <input id="login" name="login" autocomplete="off">
<button type="submit">Sign in</button></form></body></html>`;
}

export interface TestProvider {
  issuer: string;
  clientSecret: string;
  /** The next ID token the token endpoint returns is re-signed with these claims changed. */
  tamperIdToken(change: (claims: JWTPayload) => JWTPayload): void;
  close(): Promise<void>;
}

/** Starts the provider for an app whose public URL is `appUrl` (its redirect and post-logout URIs). */
export async function startTestProvider(appUrl: string): Promise<TestProvider> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: "test-key", alg: "RS256", use: "sig" };
  const clientSecret = `secret-${crypto.randomUUID()}`;

  const proxy = http.createServer();
  const backend = http.createServer();
  const issuer = `http://127.0.0.1:${await listen(proxy)}`;
  const backendUrl = `http://127.0.0.1:${await listen(backend)}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: clientSecret,
        redirect_uris: [`${appUrl}/api/auth/oidc/callback`],
        post_logout_redirect_uris: [`${appUrl}/login`],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: [crypto.randomUUID()] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "groups"] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    async findAccount(_ctx, sub) {
      const account = Object.values(ACCOUNTS).find((candidate) => candidate.sub === sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: async () => ({ sub, email: account.email, email_verified: true, name: account.name, groups: account.groups }),
      };
    },
    // Work Graph is a first-party client: no consent screen.
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
  });
  // Behind the proxy: URLs it builds use the proxy's host (X-Forwarded-Host), the issuer's.
  provider.proxy = true;
  const callback = provider.callback();

  backend.on("request", (req, res) => {
    void (async () => {
      const match = /^\/interaction\/([^/?]+)(\/login)?/.exec(req.url ?? "");
      if (!match) return callback(req, res);
      const details = await provider.interactionDetails(req, res);
      if (!match[2]) {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(loginForm(details.uid));
        return;
      }
      const login = new URLSearchParams((await readBody(req)).toString("utf8")).get("login") ?? "";
      const account = ACCOUNTS[login];
      if (!account) {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(loginForm(details.uid, "Unknown user"));
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: account.sub } }, { mergeWithLastSubmission: false });
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });

  let tamper: ((claims: JWTPayload) => JWTPayload) | null = null;
  async function tampered(body: string): Promise<string> {
    const change = tamper;
    tamper = null;
    const reply = JSON.parse(body) as { id_token?: string };
    if (!change || !reply.id_token) return body;
    const header = decodeProtectedHeader(reply.id_token);
    const claims = change(decodeJwt(reply.id_token));
    reply.id_token = await new SignJWT(claims).setProtectedHeader({ alg: header.alg!, kid: header.kid, typ: header.typ }).sign(privateKey);
    return JSON.stringify(reply);
  }

  proxy.on("request", (req, res) => {
    void (async () => {
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : new Uint8Array(await readBody(req));
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined && name !== "content-length") headers.set(name, Array.isArray(value) ? value.join(", ") : value);
      }
      headers.set("x-forwarded-host", new URL(issuer).host);
      headers.set("x-forwarded-proto", "http");
      const upstream = await fetch(`${backendUrl}${req.url}`, { method: req.method, headers, body, redirect: "manual" });
      let text = await upstream.text();
      if (req.url?.startsWith("/token") && upstream.ok) text = await tampered(text);
      const out: Record<string, string | string[]> = {};
      upstream.headers.forEach((value, name) => {
        if (!["content-length", "content-encoding", "transfer-encoding", "connection", "set-cookie"].includes(name)) out[name] = value;
      });
      const cookies = upstream.headers.getSetCookie();
      if (cookies.length > 0) out["set-cookie"] = cookies;
      res.writeHead(upstream.status, out).end(text);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(502).end(String(error));
    });
  });

  return {
    issuer,
    clientSecret,
    tamperIdToken(change) {
      tamper = change;
    },
    async close() {
      proxy.closeAllConnections();
      backend.closeAllConnections();
      await Promise.all([new Promise((resolve) => proxy.close(resolve)), new Promise((resolve) => backend.close(resolve))]);
    },
  };
}
