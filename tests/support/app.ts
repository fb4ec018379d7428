import http from "node:http";
import type { AddressInfo } from "node:net";
import { createTRPCClient, httpLink } from "@trpc/client";
import type { Db } from "../../server/db";
import type { Role } from "@work-graph/contract";
import type { Caller } from "../../server/domain/types";
import { authenticate, createToken } from "../../server/auth/tokens";
import { createCaller, type AppRouter } from "../../server/trpc/root";
import { handleNodeApi } from "../../server/http/node-api";
import { newRequestId } from "../../server/http/request-id";

/** In-process tRPC caller acting with a freshly minted token of `role`. */
export async function callerAs(db: Db, role: Role, workerId?: string) {
  const { token } = await createToken(db, { role, workerId, label: `test-${role}` });
  const caller = (await authenticate(db, token)) as Caller;
  return { token, caller, api: createCaller({ db, caller, requestId: newRequestId() }) };
}

export type TestClient = ReturnType<typeof createTRPCClient<AppRouter>>;

/**
 * The API exactly as `npm start` serves it from Node (server/http/node-api.ts: /api/trpc,
 * /api/metrics, /api/health/*, without Next) on a random local port and the test's database,
 * for tests that go over HTTP like an agent does.
 */
export async function startTestServer(db: Db) {
  const server = http.createServer((req, res) => void handleNodeApi(req, res, db));
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

export type TestServer = Awaited<ReturnType<typeof startTestServer>>;
