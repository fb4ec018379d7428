import http from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { Instance } from "../../server/instance";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase, testInstance } from "../support/database";
import { call, subscriptionError, DOCUMENTED_REASONS, fields, INTERNALS, procedures, type Reply } from "./support";

/*
 * Issue 10 items 2–5: batch and body limits (checked before anything is read, and while
 * streaming), authentication before the body, NUL and lone surrogates refused by the schemas,
 * malformed cookies, statement timeout, and INTERNAL errors that show only a request id.
 */

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
let admin: string;
let operator: string;
const MAX_BODY = 64 * 1024;

beforeEach(() => {
  vi.stubEnv("WORK_GRAPH_MAX_BODY_BYTES", String(MAX_BODY));
});
beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer(database.instance);
  admin = (await callerAs(database.instance, "admin")).token;
  operator = (await callerAs(database.instance, "operator")).token;
});
afterAll(async () => {
  await server.close();
  await database.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function expectRefusal(reply: Reply, status: number, reason: string) {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.body.error.data.reason).toBe(reason);
  expect(reply.body.error.message).not.toMatch(INTERNALS);
  expect(reply.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  expect(reply.headers.get("cache-control")).toBe("no-store");
}

/** health.check, timed: it must answer within a second whatever else is going on. */
async function timedHealthCheck(): Promise<number> {
  const started = performance.now();
  const reply = await call(server.url, { path: "health.check", type: "query" }, undefined, {});
  expect(reply.status).toBe(200);
  return performance.now() - started;
}

interface RawReply {
  status: number;
  body: string;
  bytesSent: number;
}

/**
 * A POST written by hand: `declaredLength` goes into Content-Length (or chunked when null),
 * then chunks are written until the server answers or `maxBytes` are sent.
 */
function rawPost(pathAndQuery: string, headers: Record<string, string>, options: { declaredLength: number | null; maxBytes: number; contentType?: string }): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const url = new URL(server.url);
    const request = http.request({
      host: url.hostname,
      port: url.port,
      path: pathAndQuery,
      method: "POST",
      headers: { ...headers, "content-type": options.contentType ?? "application/json", ...(options.declaredLength === null ? {} : { "content-length": String(options.declaredLength) }) },
    });
    let bytesSent = 0;
    let answered = false;
    const chunk = Buffer.alloc(16 * 1024, "a");
    request.on("response", (response) => {
      answered = true;
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (data: string) => (body += data));
      response.on("end", () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, body, bytesSent });
      });
    });
    request.on("error", (error) => {
      if (!answered) reject(error);
    });
    request.write('{"title":"');
    const pump = () => {
      while (!answered && bytesSent < options.maxBytes) {
        bytesSent += chunk.length;
        if (!request.write(chunk)) return void request.once("drain", pump);
      }
    };
    pump();
  });
}

describe("batch limit (10.2)", () => {
  it("refuses a batch over WORK_GRAPH_MAX_BATCH (default 20) with 413 TOO_LARGE before running any call, while health.check answers within a second", async () => {
    // 500 calls (900 would not fit into Node's 16 KiB request-line limit without a body).
    const paths = Array.from({ length: 500 }, () => "workItems.list").join(",");
    const [reply, healthMs] = await Promise.all([
      fetch(`${server.url}/api/trpc/${paths}?batch=1`, { headers: bearer(admin) }).then(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() })),
      timedHealthCheck(),
    ]);
    expectRefusal({ ...reply, body: JSON.parse(reply.text) }, 413, "TOO_LARGE");
    expect(JSON.parse(reply.text).error.message).toMatch(/at most 20 calls/);
    expect(healthMs).toBeLessThan(1_000);

    const twenty = Array.from({ length: 20 }, () => "health.check").join(",");
    const ok = await fetch(`${server.url}/api/trpc/${twenty}?batch=1`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toHaveLength(20);
    const twentyOne = await fetch(`${server.url}/api/trpc/${twenty},health.check?batch=1`);
    expect(twentyOne.status).toBe(413);
  });
});

describe("body limit and authentication before the body (10.3)", () => {
  it("refuses a declared Content-Length over the limit at once, without waiting for the body", async () => {
    const reply = await rawPost("/api/trpc/workItems.create", bearer(operator), { declaredLength: 400 * 1024 * 1024, maxBytes: 32 * 1024 });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body).error.data).toMatchObject({ reason: "TOO_LARGE", code: "PAYLOAD_TOO_LARGE", httpStatus: 413 });
  });

  it("refuses a chunked body once it passes the limit, while streaming, and health.check still answers within a second", async () => {
    const upload = rawPost("/api/trpc/workItems.create", bearer(operator), { declaredLength: null, maxBytes: 64 * 1024 * 1024, contentType: "text/plain" });
    const healthMs = await timedHealthCheck();
    const reply = await upload;
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body).error.data.reason).toBe("TOO_LARGE");
    // The server answered long before the client could send everything it meant to.
    expect(reply.bytesSent).toBeLessThan(64 * 1024 * 1024);
    expect(healthMs).toBeLessThan(1_000);
  });

  it("answers an unauthenticated POST with 401 without reading its body", async () => {
    // The declared body is within the limit but never sent: only a server that does not read it can answer.
    // Any content type: a JSON body sent as text/plain (curl -d, fetch with a string) is read as JSON too, but only after authentication.
    for (const contentType of ["application/json", "text/plain", "application/x-www-form-urlencoded"]) {
      const reply = await rawPost("/api/trpc/workItems.create", {}, { declaredLength: MAX_BODY - 1, maxBytes: 0, contentType });
      expect(reply.status, contentType).toBe(401);
      expect(JSON.parse(reply.body).error.data.reason).toBe("UNAUTHENTICATED");
      const badToken = await rawPost("/api/trpc/tokens.create", bearer("wgx_not-a-token"), { declaredLength: MAX_BODY - 1, maxBytes: 0, contentType });
      expect(badToken.status, contentType).toBe(401);
    }
  });

  it("still accepts a body of many chunks under the limit, and JSON without a JSON content type", async () => {
    const title = "t".repeat(400);
    const reply = await fetch(`${server.url}/api/trpc/workItems.create`, {
      method: "POST",
      headers: { ...bearer(operator), "content-type": "text/plain" },
      body: JSON.stringify({ id: "under-limit", title, description: "d".repeat(49_000) }),
    });
    expect(reply.status, await reply.clone().text()).toBe(200);
  });
});

describe("NUL and lone surrogates (10.4)", () => {
  const stringFields = procedures().flatMap((procedure) =>
    fields(procedure.input)
      .filter((field) => field.kind === "string" || field.kind === "enum")
      .map((field) => ({ procedure, field })),
  );

  it("covers every string field of every procedure", () => {
    expect(stringFields.length).toBeGreaterThan(60);
  });

  it.each([
    ["NUL", "before\u0000after"],
    ["a lone high surrogate", "before\ud800after"],
    ["a lone low surrogate", "\udc00"],
  ])("every string field with %s gets VALIDATION naming the field, and no internals", async (_what, value) => {
    const before = await database.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM work_items`;
    for (const { procedure, field } of stringFields) {
      const input = fieldInput(field.path, value);
      const where = `${procedure.path} ${field.path.join(".")}`;
      if (procedure.type === "subscription") {
        // A subscription answers 200 and reports the refusal as the stream's first error frame.
        const streamed = await subscriptionError(server.url, procedure.path, input, bearer(admin));
        expect(streamed.error?.data.reason, where).toBe("VALIDATION");
        expect(streamed.error?.message, where).not.toMatch(INTERNALS);
        continue;
      }
      const reply = await call(server.url, procedure as { path: string; type: "query" | "mutation" }, input, bearer(admin));
      expect(reply.status, `${where}: ${reply.text}`).toBe(400);
      expect(reply.body.error.data.reason, where).toBe("VALIDATION");
      expect(reply.body.error.message, where).not.toMatch(INTERNALS);
      if (field.kind === "string") {
        expect(reply.body.error.message, where).toContain(`${field.path.join(".")}: must not contain NUL characters or unpaired UTF-16 surrogates`);
      }
    }
    const after = await database.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM work_items`;
    expect(after).toEqual(before);
  });

  it("pairs of surrogates (emoji) and other Unicode are fine", async () => {
    const reply = await call(server.url, { path: "workItems.create", type: "mutation" }, { id: "emoji", title: "ship it 🚀 — ok ‮ rtl" }, bearer(operator));
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.result.data.title).toBe("ship it 🚀 — ok ‮ rtl");
  });
});

/** An input whose only field is `path` (arrays of one element on the way). */
function fieldInput(path: (string | number)[], value: unknown): unknown {
  let result: unknown = value;
  for (let i = path.length - 1; i >= 0; i--) result = typeof path[i] === "number" ? [result] : { [path[i]!]: result };
  return result;
}

describe("session cookie (10.5)", () => {
  it.each(["%", "%E0%A4%A", "a%ZZ", "\u00ff", ""])("a malformed wg_session cookie %j is UNAUTHENTICATED, not a 500", async (cookie) => {
    const reply = await call(server.url, { path: "workItems.list", type: "query" }, {}, { cookie: `wg_session=${cookie}` });
    expectRefusal(reply, 401, "UNAUTHENTICATED");
  });
});

describe("unexpected errors (10.4)", () => {
  it("answer INTERNAL with a generic message and detail.requestId; the details go only to the server log", async () => {
    const broken = await createTestDatabase();
    const brokenServer = await startTestServer(broken.instance);
    const token = (await callerAs(broken.instance, "operator")).token;
    const client = await broken.connect();
    await client.query("ALTER TABLE work_items RENAME TO work_items_gone");
    // The server log is pino on stdout (server/log.ts): one JSON line per failure, with the request id.
    const written: string[] = [];
    const logged = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
      return true;
    });
    try {
      const reply = await call(brokenServer.url, { path: "workItems.list", type: "query" }, {}, bearer(token));
      expect(reply.status).toBe(500);
      const requestId = reply.headers.get("x-request-id");
      expect(reply.body.error.data).toEqual({ code: "INTERNAL_SERVER_ERROR", httpStatus: 500, path: "workItems.list", reason: "INTERNAL", detail: { requestId } });
      expect(reply.body.error.message).toBe(`internal error; the server log has the details under request id ${requestId}`);
      expect(reply.text).not.toMatch(INTERNALS);
      const logLine = written.join("").split("\n").find((line) => line.includes(requestId!) && line.includes('"err"'));
      expect(logLine).toMatch(/work_items/);
    } finally {
      logged.mockRestore();
      await brokenServer.close();
      await broken.close();
    }
  });
});

describe("statement timeout (10.2)", () => {
  let slowDb: Instance;
  let slowServer: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    slowDb = testInstance(database.url, { poolSize: 4, statementTimeoutMs: 1_000 });
    slowServer = await startTestServer(slowDb);
  });
  afterAll(async () => {
    await slowServer.close();
    await slowDb.close();
  });

  it("ends a read stuck longer than the timeout with 503 UNAVAILABLE, and health.check keeps answering meanwhile", async () => {
    const locker = await database.connect();
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE work_items IN ACCESS EXCLUSIVE MODE");
    try {
      const stuck = call(slowServer.url, { path: "workItems.list", type: "query" }, {}, bearer(operator));
      // Gate on the database: the list is waiting for the lock.
      await expect.poll(async () => {
        const { rows } = await locker.query("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'work_items'::regclass");
        return rows[0].n;
      }, { timeout: 30_000, interval: 20 }).toBeGreaterThan(0);
      const started = performance.now();
      const health = await call(slowServer.url, { path: "health.check", type: "query" }, undefined, {});
      expect(health.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(1_000);
      const reply = await stuck;
      expectRefusal(reply, 503, "UNAVAILABLE");
      expect(reply.body.error.message).toMatch(/statement timeout/);
    } finally {
      await locker.query("ROLLBACK");
    }
  });
});

describe("every reply", () => {
  it("has a documented reason, x-request-id and cache-control: no-store", async () => {
    const reply = await call(server.url, { path: "workItems.get", type: "query" }, { id: "nope" }, bearer(operator));
    expectRefusal(reply, 404, "NOT_FOUND");
    expect(DOCUMENTED_REASONS).toContain("TOO_LARGE");
    const ok = await call(server.url, { path: "health.check", type: "query" }, undefined, {});
    expect(ok.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(ok.headers.get("cache-control")).toBe("no-store");
  });
});
