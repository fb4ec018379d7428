import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { createTRPCClient, httpLink } from "@trpc/client";
import { createToken } from "../../server/auth/tokens";
import type { Db } from "../../server/db";
import type { Caller, Role } from "../../server/domain/types";
import { authenticate } from "../../server/auth/tokens";
import { createCaller, type AppRouter } from "../../server/trpc/root";
import { handleTrpcRequest } from "../../server/trpc/http";
import { newRequestId } from "../../server/http/request-id";
import { handleMetricsRequest } from "../../server/http/metrics";

/** In-process tRPC caller acting with a freshly minted token of `role`. */
export async function callerAs(db: Db, role: Role, workerId?: string) {
  const { token } = await createToken(db, { role, workerId, label: `test-${role}` });
  const caller = (await authenticate(db, token)) as Caller;
  return { token, caller, api: createCaller({ db, caller, requestId: newRequestId() }) };
}

export type TestClient = ReturnType<typeof createTRPCClient<AppRouter>>;

/**
 * The real tRPC HTTP handler on a random local port (what `npm start` serves at /api/trpc,
 * without Next), for tests that go over HTTP like an agent does.
 */
export async function startTestServer(db: Db) {
  const server = http.createServer(async (req, res) => {
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers.set(key, value);
      else if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    }
    // A client that goes away aborts its request (waiting calls and streams stop, like under Next).
    const aborted = new AbortController();
    res.on("close", () => aborted.abort());
    // The body is streamed, as Next hands it over: the handler decides how much of it to read.
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers,
      body: req.method === "GET" || req.method === "HEAD" ? undefined : (Readable.toWeb(req) as ReadableStream<Uint8Array>),
      duplex: "half",
      signal: aborted.signal,
    } as RequestInit);
    const response = req.url?.startsWith("/api/metrics") ? await handleMetricsRequest(db, request) : await handleTrpcRequest(db, request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    // Streamed, not buffered: events.stream (SSE) never ends by itself.
    const reader = response.body?.getReader();
    for (let chunk = await reader?.read(); chunk && !chunk.done && !res.destroyed; chunk = await reader!.read()) {
      if (!res.write(chunk.value)) await new Promise((resolve) => { res.once("drain", resolve); res.once("close", resolve); });
    }
    if (res.destroyed) await reader?.cancel().catch(() => {});
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    client(token: string): TestClient {
      return createTRPCClient<AppRouter>({
        links: [httpLink({ url: `${url}/api/trpc`, headers: () => ({ authorization: `Bearer ${token}` }) })],
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
