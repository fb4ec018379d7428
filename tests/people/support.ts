import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Instance } from "../../server/instance";
import { handleNodeApi } from "../../server/http/node-api";

/*
 * The sign-in routes over plain HTTP: a loopback server handing every request to the API
 * (server/http/node-api.ts, which serves /api/auth/oidc/{login,callback} and /api/session too),
 * and a cookie-keeping client that follows nothing on its own, so each hop of the sign-in can
 * be looked at (and tampered with). It listens first (the provider needs its URL) and serves
 * once `use` gave it the test's instance.
 */
export async function startSignInApp() {
  let instance: Instance | null = null;
  const server = http.createServer((req, res) => {
    if (!instance) return void res.writeHead(503).end("no database yet");
    void handleNodeApi(instance, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    use(database: { instance: Instance }) {
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
