import { describe, expect } from "vitest";
import { createSession, endSession, sessionCaller } from "../../server/auth/sessions";
import { revokeToken } from "../../server/auth/tokens";
import { callerAs, type TestServer } from "../support/app";
import { call } from "./support";
import { advanceClock, databaseTest } from "../support/fixtures";

/*
 * Issue 10.6: the wg_session cookie carries a random session id, never the token; the
 * database keeps only its hash and enforces the expiry on its own clock; logout and token
 * revocation end sessions, so a copied cookie stops working.
 */

const it = databaseTest();

const listWithCookie = (server: TestServer, sessionId: string) =>
  call(server.url, { path: "workItems.list", type: "query" }, {}, { cookie: `other=1; wg_session=${sessionId}` });

describe("dashboard sessions", () => {
  it("a session id authenticates as its token's caller; the database stores only its hash", async ({ database, server }) => {
    const { caller } = await callerAs(database.instance, "operator");
    const sessionId = await createSession(database.db, caller.tokenId);
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await sessionCaller(database.db, sessionId)).toEqual(caller);
    expect((await listWithCookie(server, sessionId)).status).toBe(200);

    const client = await database.connect();
    const { rows } = await client.query("SELECT id_hash, expires_at - created_at AS lifetime FROM dashboard_sessions WHERE token_id = $1", [caller.tokenId]);
    expect(rows).toHaveLength(1);
    expect(rows[0].id_hash).not.toContain(sessionId);
    expect(rows[0].id_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].lifetime).toMatchObject({ hours: 12 });
  });

  it("the token itself is not a session: a cookie holding the token is refused", async ({ database, server }) => {
    const { token } = await callerAs(database.instance, "operator");
    expect((await listWithCookie(server, token)).status).toBe(401);
  });

  it("logout deletes the session: the same cookie, copied anywhere, stops working", async ({ database, server }) => {
    const { caller } = await callerAs(database.instance, "admin");
    const sessionId = await createSession(database.db, caller.tokenId);
    expect((await listWithCookie(server, sessionId)).status).toBe(200);
    await endSession(database.db, sessionId);
    const reply = await listWithCookie(server, sessionId);
    expect(reply.status).toBe(401);
    expect(reply.body.error.data.reason).toBe("UNAUTHENTICATED");
  });

  it("expiry is enforced by the database clock", async ({ database, server }) => {
    const { caller } = await callerAs(database.instance, "operator");
    const sessionId = await createSession(database.db, caller.tokenId);
    const client = await database.connect();
    await advanceClock(client, 13 * 3600);
    expect(await sessionCaller(database.db, sessionId)).toBeNull();
    expect((await listWithCookie(server, sessionId)).status).toBe(401);
    // The next login sweeps expired sessions away.
    await createSession(database.db, caller.tokenId);
    const { rows } = await client.query("SELECT count(*)::int AS n FROM dashboard_sessions WHERE expires_at <= now()");
    expect(rows[0].n).toBe(0);
  });

  it("revoking the token ends all of its sessions", async ({ database, server }) => {
    const { caller } = await callerAs(database.instance, "operator");
    const sessions = [await createSession(database.db, caller.tokenId), await createSession(database.db, caller.tokenId)];
    const other = await callerAs(database.instance, "operator");
    const untouched = await createSession(database.db, other.caller.tokenId);
    await revokeToken(database.db, caller.tokenId);
    for (const sessionId of sessions) expect((await listWithCookie(server, sessionId)).status).toBe(401);
    const client = await database.connect();
    const { rows } = await client.query("SELECT count(*)::int AS n FROM dashboard_sessions WHERE token_id = $1", [caller.tokenId]);
    expect(rows[0].n).toBe(0);
    expect((await listWithCookie(server, untouched)).status).toBe(200);
  });

  it("cookie-authenticated mutations still need the CSRF header", async ({ database, server }) => {
    const { caller } = await callerAs(database.instance, "operator");
    const sessionId = await createSession(database.db, caller.tokenId);
    const create = { path: "workItems.create", type: "mutation" as const };
    const without = await call(server.url, create, { title: "csrf" }, { cookie: `wg_session=${sessionId}` });
    expect(without.status).toBe(401);
    const withHeader = await call(server.url, create, { title: "csrf" }, { cookie: `wg_session=${sessionId}`, "x-work-graph-csrf": "1" });
    expect(withHeader.status, withHeader.text).toBe(200);
  });
});
