import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Instance } from "../../server/instance";
import { handleNodeApi } from "../../server/http/node-api";
import * as oidcCallback from "../../app/api/auth/oidc/callback/route";
import * as oidcLogin from "../../app/api/auth/oidc/login/route";
import * as session from "../../app/api/session/route";

/*
 * The sign-in routes over plain HTTP: a loopback server handing /api/auth/oidc/{login,callback}
 * and /api/session to the app's own route handlers (what `next start` serves) and everything
 * else to the API (server/http/node-api.ts), and a cookie-keeping client that follows nothing
 * on its own, so each hop of the sign-in can be looked at (and tampered with).
 */

const ROUTES: Record<string, Partial<Record<string, (request: Request) => Promise<Response>>>> = {
  "/api/auth/oidc/login": { GET: oidcLogin.GET },
  "/api/auth/oidc/callback": { GET: oidcCallback.GET },
  "/api/session": { POST: session.POST, DELETE: session.DELETE },
};

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Listens first (the provider needs its URL), serves once `use` gave it the test's database: the
 * API on that client, the route handlers on the process-wide one (app/_lib/instance.ts, DATABASE_URL).
 */
export async function startSignInApp() {
  let instance: Instance | null = null;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const handler = ROUTES[url.pathname]?.[req.method ?? "GET"];
    if (!instance) return void res.writeHead(503).end("no database yet");
    if (!handler) return void handleNodeApi(instance, req, res);
    void (async () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
      const body = req.method === "GET" ? undefined : await readBody(req);
      const response = await handler(new Request(`${origin}${req.url}`, { method: req.method, headers, body }));
      const out: Record<string, string | string[]> = {};
      response.headers.forEach((value, name) => {
        if (name !== "set-cookie") out[name] = value;
      });
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) out["set-cookie"] = cookies;
      res.writeHead(response.status, out).end(Buffer.from(await response.arrayBuffer()));
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(599).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    use(database: { url: string; instance: Instance }) {
      process.env.DATABASE_URL ??= database.url;
      instance = database.instance;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface Hop {
  url: string;
  status: number;
  location: string | null;
  text: string;
}

/** A browser without a page: one cookie jar per host (paths ignored), redirects followed by hand. */
export class Browser {
  private readonly jars = new Map<string, Map<string, string>>();

  cookie(origin: string, name: string): string | undefined {
    return this.jars.get(new URL(origin).host)?.get(name);
  }

  async request(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Hop> {
    const host = new URL(url).host;
    const jar = this.jars.get(host) ?? new Map<string, string>();
    this.jars.set(host, jar);
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(url, {
      method: init.method ?? "GET",
      body: init.body,
      redirect: "manual",
      headers: { ...(cookie ? { cookie } : {}), ...init.headers },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const [name, ...value] = pair!.trim().split("=");
      const gone = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute) || /^\s*expires=Thu, 01 Jan 1970/i.test(attribute));
      if (gone || value.join("=") === "") jar.delete(name!);
      else jar.set(name!, value.join("="));
    }
    const location = response.headers.get("location");
    return { url, status: response.status, location: location === null ? null : new URL(location, url).href, text: await response.text() };
  }

  /** Follows redirects from `url` until a page answers, or `stop` says a URL is where to halt (not requested). */
  async follow(url: string, stop: (url: string) => boolean = () => false): Promise<Hop> {
    let hop = await this.request(url);
    for (let i = 0; i < 20 && hop.location && !stop(hop.location); i++) hop = await this.request(hop.location);
    return hop;
  }
}
