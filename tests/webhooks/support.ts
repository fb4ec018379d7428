import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

// Webhook secrets are encrypted with this per-run key (never a file in the repository's data dir).
process.env.WORK_GRAPH_SECRET_KEY ??= randomBytes(32).toString("hex");

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver does with the n-th request (0-based) it gets on a path. */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | "hang";

/** A real HTTP receiver on 127.0.0.1 that records every request and answers as told per path. */
export async function startReceiver() {
  const received: Received[] = [];
  const behaviours = new Map<string, (n: number) => Answer>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = req.url ?? "/";
      const n = received.filter((r) => r.path === path).length;
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      const answer = behaviours.get(path)?.(n) ?? { status: 200, body: "ok" };
      if (answer === "hang") {
        hanging.add(res);
        res.on("close", () => hanging.delete(res));
        return;
      }
      res.writeHead(answer.status, { "content-type": "text/plain", ...answer.headers });
      res.end(answer.body ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    on(path: string, behaviour: (n: number) => Answer) {
      behaviours.set(path, behaviour);
      return `${base}${path}`;
    },
    at: (path: string) => received.filter((r) => r.path === path),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What a receiver must do (docs/webhooks.md): recompute the HMAC over "<t>.<raw body>". */
export function signatureIsValid(secret: string, header: string | string[] | undefined, rawBody: string): boolean {
  const match = typeof header === "string" ? /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) : null;
  if (!match) return false;
  const expected = createHmac("sha256", secret).update(`${match[1]}.${rawBody}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, "hex"));
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 15_000): Promise<Exclude<T, false | undefined>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as Exclude<T, false | undefined>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(25);
  }
}
