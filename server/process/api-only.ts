import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { getDb } from "../db";
import { healthResponse, liveness, readiness } from "../health";
import { handleTrpcRequest } from "../trpc/http";

/**
 * `npm start -- --api-only`: /api/trpc and /api/health/* without the Next dashboard (no build,
 * starts in seconds): for headless deployments and the lifecycle tests. The routes call the same
 * functions as Next's route handlers in app/api/.
 */
export async function handleApiOnly(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
  let response: Response;
  if (url.pathname === "/api/health/live") response = healthResponse(liveness());
  else if (url.pathname === "/api/health/ready") response = healthResponse(await readiness(getDb()));
  else if (url.pathname === "/api/trpc" || url.pathname.startsWith("/api/trpc/")) {
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers.set(key, value);
      else if (Array.isArray(value)) for (const item of value) headers.append(key, item);
    }
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const request = new Request(url, {
      method: req.method,
      headers,
      body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
      ...(hasBody ? { duplex: "half" } : {}),
    } as RequestInit);
    response = await handleTrpcRequest(getDb(), request);
  } else {
    response = Response.json({ reason: "NOT_FOUND", message: "this server runs with --api-only: only /api/trpc and /api/health/* exist" }, { status: 404 });
  }
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}
