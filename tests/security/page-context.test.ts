import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect } from "vitest";
import { createSession } from "../../server/auth/sessions";
import { createRequestHandler } from "../../server/http/node-api";
import { PAGE_CONTEXT_HEADER, readPageContext } from "../../server/http/page-context";
import { callerAs } from "../support/app";
import { databaseTest } from "../support/fixtures";

/*
 * The dashboard's pages learn their caller from PAGE_CONTEXT_HEADER, which the Node server sets
 * before handing a page request to Next: whatever a client sends under that name must never
 * reach a page.
 */

const it = databaseTest();

/** The server's request handler with a stand-in for Next that answers with the context header it was given. */
async function startWithPages(instance: Parameters<typeof createRequestHandler>[0]) {
  const handle = createRequestHandler(instance, async (req, res) => {
    const values = req.rawHeaders.filter((_, i) => i % 2 === 0 && req.rawHeaders[i]!.toLowerCase() === PAGE_CONTEXT_HEADER);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ header: req.headers[PAGE_CONTEXT_HEADER] ?? null, count: values.length }));
  });
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const forged = (caller: unknown) => Buffer.from(JSON.stringify({ caller, adminContacts: [] })).toString("base64url");

describe("the page context header", () => {
  it("a client-sent context is replaced by the server's: no session, no caller", async ({ database }) => {
    const { caller: admin } = await callerAs(database.instance, "admin");
    const server = await startWithPages(database.instance);
    try {
      const response = await fetch(`${server.url}/items`, { headers: { [PAGE_CONTEXT_HEADER]: forged(admin) } });
      const seen = (await response.json()) as { header: string; count: number };
      expect(seen.count).toBe(1);
      expect(readPageContext(seen.header)).toEqual({ caller: null, adminContacts: [] });
    } finally {
      await server.close();
    }
  });

  it("with a session cookie, the context holds the session's caller, not the one the client sent", async ({ database }) => {
    const { caller: operator } = await callerAs(database.instance, "operator");
    const { caller: admin } = await callerAs(database.instance, "admin");
    const sessionId = await createSession(database.db, operator.tokenId);
    const server = await startWithPages(database.instance);
    try {
      const response = await fetch(`${server.url}/`, { headers: { cookie: `wg_session=${sessionId}`, [PAGE_CONTEXT_HEADER]: forged(admin) } });
      const seen = (await response.json()) as { header: string; count: number };
      expect(seen.count).toBe(1);
      expect(readPageContext(seen.header).caller).toEqual(operator);
    } finally {
      await server.close();
    }
  });

  it("an agent token's session is no dashboard caller", async ({ database }) => {
    const { caller: agent } = await callerAs(database.instance, "agent", "page-agent");
    const sessionId = await createSession(database.db, agent.tokenId);
    const server = await startWithPages(database.instance);
    try {
      const seen = (await (await fetch(`${server.url}/`, { headers: { cookie: `wg_session=${sessionId}` } })).json()) as { header: string };
      expect(readPageContext(seen.header).caller).toBeNull();
    } finally {
      await server.close();
    }
  });
});
