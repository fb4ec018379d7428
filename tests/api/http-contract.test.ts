import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";

/*
 * API.md's Transport and Errors sections, exactly as a client in any language sees them:
 * plain fetch, a query is GET /api/trpc/<path>?input=<url-encoded JSON>, a mutation is a POST
 * with the input JSON as the body. No tRPC client, no transformer.
 */

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
let tokens: { admin: string; operator: string; agentA: string; agentB: string };

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer(database.instance);
  tokens = {
    admin: (await callerAs(database.instance, "admin")).token,
    operator: (await callerAs(database.instance, "operator")).token,
    agentA: (await callerAs(database.instance, "agent", "http-a")).token,
    agentB: (await callerAs(database.instance, "agent", "http-b")).token,
  };
});
afterAll(async () => {
  await server.close();
  await database.close();
});

interface Reply {
  status: number;
  contentType: string | null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw JSON from the wire
  body: any;
}

/** Every reply of this file, for the checks that hold for all of them. */
const replies: { what: string; reply: Reply }[] = [];

async function send(what: string, url: string, init: RequestInit): Promise<Reply> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = { unparsable: text };
  }
  const reply = { status: response.status, contentType: response.headers.get("content-type"), body };
  replies.push({ what, reply });
  return reply;
}

const auth = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

/** GET /api/trpc/<path>?input=<url-encoded JSON>. */
const query = (path: string, input?: unknown, token?: string) =>
  send(`GET ${path}`, `${server.url}/api/trpc/${path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, {
    headers: auth(token),
  });

/** POST /api/trpc/<path> with the input JSON as the body (or a raw body string). */
const mutate = (path: string, input: unknown, token?: string, raw?: { body?: string; contentType?: string | null }) =>
  send(`POST ${path}`, `${server.url}/api/trpc/${path}`, {
    method: "POST",
    headers: {
      ...auth(token),
      ...(raw?.contentType === null ? {} : { "content-type": raw?.contentType ?? "application/json" }),
    },
    body: raw?.body ?? JSON.stringify(input),
  });

/** `{"result":{"data":…}}` and nothing else; returns the data. */
function data(reply: Reply) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  expect(reply.contentType).toMatch(/^application\/json/);
  expect(Object.keys(reply.body)).toEqual(["result"]);
  expect(Object.keys(reply.body.result)).toEqual(["data"]);
  return reply.body.result.data;
}

const HTTP_STATUS: Record<string, number> = { BAD_REQUEST: 400, UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404, CONFLICT: 409 };

/** The error shape: error.message, error.data.{code, httpStatus, reason, detail?}; no stack trace. Returns error.data. */
function failure(reply: Reply, reason: string, code: string) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(HTTP_STATUS[code]);
  expect(reply.contentType).toMatch(/^application\/json/);
  expect(Object.keys(reply.body)).toEqual(["error"]);
  const { error } = reply.body;
  expect(typeof error.message).toBe("string");
  expect(error.message.length).toBeGreaterThan(0);
  expect(error.data).toMatchObject({ code, httpStatus: HTTP_STATUS[code], reason });
  expect(error.data.stack).toBeUndefined();
  return error.data;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("HTTP transport (API.md)", () => {
  it("health.check needs no token and returns { ok: true, database: 'ok', now } with the database's now", async () => {
    const health = data(await query("health.check"));
    expect(Object.keys(health).sort()).toEqual(["database", "now", "ok"]);
    expect(health).toMatchObject({ ok: true, database: "ok" });
    expect(health.now).toMatch(ISO_UTC);
    const client = await database.connect();
    const { rows } = await client.query<{ now: Date }>("SELECT work_graph_clock() AS now");
    expect(Math.abs(Date.parse(health.now) - rows[0]!.now.getTime())).toBeLessThan(5_000);
    // With an input, and even with a bad token, it still answers.
    expect(data(await query("health.check", {}))).toMatchObject({ ok: true });
    expect(data(await query("health.check", {}, "not-a-token"))).toMatchObject({ ok: true, database: "ok" });
  });

  it("an agent's whole lease lifecycle over plain GET/POST", async () => {
    const created = data(await mutate("workItems.create", { id: "http-task", title: "Over HTTP", description: "plain JSON", priority: 7 }, tokens.operator));
    expect(created).toMatchObject({
      id: "http-task", title: "Over HTTP", description: "plain JSON", parentId: null, status: "open", stage: "ready",
      priority: 7, dependsOn: [], openChildCount: 0, currentLease: null, previousWorkerId: null,
    });
    const claimed = data(await mutate("leases.claim", { workItemId: "http-task", durationSeconds: 120 }, tokens.agentA));
    expect(Object.keys(claimed)).toEqual(expect.arrayContaining(["lease", "workItem"]));
    const { lease } = claimed;
    expect(lease).toMatchObject({ workItemId: "http-task", workerId: "http-a", epoch: 1, renewedAt: null, endedAt: null, outcome: null });
    expect(lease.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(Date.parse(lease.expiresAt) - Date.parse(lease.acquiredAt)).toBe(120_000);
    expect(claimed.workItem).toMatchObject({ id: "http-task", stage: "leased", currentLease: lease });

    expect(data(await query("workItems.get", { id: "http-task" }, tokens.agentB))).toMatchObject({ stage: "leased", currentLease: lease });
    expect(data(await query("leases.get", { leaseId: lease.id }, tokens.operator))).toEqual(lease);
    const active = data(await query("leases.active", {}, tokens.operator));
    expect(active.find((l: { id: string }) => l.id === lease.id)).toMatchObject({ workItemTitle: "Over HTTP", workerId: "http-a" });
    expect(typeof active[0].secondsLeft).toBe("number");
    const renewed = data(await mutate("leases.renew", { leaseId: lease.id, epoch: 1, durationSeconds: 300 }, tokens.agentA));
    expect(renewed.renewedAt).toMatch(ISO_UTC);
    const note = data(await mutate("leases.note", { leaseId: lease.id, epoch: 1, content: "half done" }, tokens.agentA));
    expect(note).toMatchObject({ workItemId: "http-task", leaseId: lease.id, epoch: 1, workerId: "http-a", content: "half done" });
    expect(Object.keys(note).sort()).toEqual(["content", "createdAt", "epoch", "id", "leaseId", "workItemId", "workerId"]);
    const notes = data(await query("notes.list", { workItemId: "http-task" }, tokens.operator));
    expect(notes).toEqual({ items: [note], nextCursor: null });
    const released = data(await mutate("leases.release", { leaseId: lease.id, epoch: 1, evidence: "tests pass", links: ["https://example.com/pr/1"] }, tokens.agentA));
    expect(released.lease).toMatchObject({ id: lease.id, outcome: "released" });
    expect(released.lease.endedAt).toMatch(ISO_UTC);
    expect(released.workItem).toMatchObject({ status: "released", stage: "released", currentLease: null, previousWorkerId: "http-a" });
    const history = data(await query("leases.history", { workItemId: "http-task" }, tokens.operator));
    expect(history).toEqual([released.lease]);
    const events = data(await query("events.list", { workItemId: "http-task" }, tokens.operator));
    expect(events.items.map((e: { type: string }) => e.type)).toEqual([
      "work_item.created", "lease.claimed", "lease.renewed", "note.added", "lease.ended", "work_item.status_changed",
    ]);
    expect(events.nextCursor).toBe(String(events.items.at(-1).sequence));
    // Times inside event data come in the same format as everywhere else.
    expect(events.items[1].data).toMatchObject({ workerId: "http-a", expiresAt: lease.expiresAt, durationSeconds: 120 });
    expect(events.items[2].data.expiresAt).toBe(renewed.expiresAt);
    const summary = data(await query("dashboard.summary", undefined, tokens.operator));
    expect(summary.stages.released).toBeGreaterThanOrEqual(1);
    // A next-claim with nothing ready: {"result":{"data":null}}.
    expect(data(await mutate("leases.claim", {}, tokens.agentB))).toBeNull();
    // Input-less queries may omit ?input entirely.
    expect(data(await query("workItems.list", undefined, tokens.operator)).items.map((w: { id: string }) => w.id)).toContain("http-task");
    expect(data(await query("workItems.list", { stage: ["released", "cancelled"] }, tokens.operator)).items).toHaveLength(1);
  });

  it("a JSON body is read as JSON even without a JSON Content-Type (curl -d, fetch with a string)", async () => {
    data(await mutate("workItems.create", { id: "no-content-type", title: "No content type" }, tokens.operator, { contentType: null }));
    data(await mutate("workItems.create", { id: "form-content-type", title: "curl -d" }, tokens.operator, {
      contentType: "application/x-www-form-urlencoded",
    }));
    expect(data(await query("workItems.get", { id: "form-content-type" }, tokens.operator)).title).toBe("curl -d");
  });
});

describe("HTTP errors (API.md)", () => {
  it("VALIDATION / BAD_REQUEST for bad input, with issues; never a 500", async () => {
    await mutate("workItems.create", { id: "valid-target", title: "Target" }, tokens.operator);
    const schemaFailures: [string, unknown, string][] = [
      ["leases.claim", { durationSeconds: 0 }, tokens.agentA],
      ["leases.claim", { durationSeconds: 86_401 }, tokens.agentA],
      ["leases.claim", { durationSeconds: 1.5 }, tokens.agentA],
      ["leases.claim", { durationSeconds: "60" }, tokens.agentA],
      ["leases.release", { leaseId: crypto.randomUUID(), epoch: 1, evidence: "   " }, tokens.agentA],
      ["leases.release", { leaseId: crypto.randomUUID(), epoch: 1 }, tokens.agentA],
      ["leases.renew", { leaseId: "not-a-uuid", epoch: 1 }, tokens.agentA],
      ["leases.renew", { leaseId: crypto.randomUUID() }, tokens.agentA],
      ["leases.note", { leaseId: crypto.randomUUID(), epoch: -1, content: "x" }, tokens.agentA],
      ["leases.decompose", { leaseId: crypto.randomUUID(), epoch: 1, children: [] }, tokens.agentA],
      ["workItems.create", { id: "Bad Id", title: "x" }, tokens.operator],
      ["workItems.create", { title: "" }, tokens.operator],
      ["workItems.create", { title: "x", priority: 1.5 }, tokens.operator],
      ["workItems.cancel", { id: "valid-target", reason: " " }, tokens.operator],
      ["attention.resolve", { id: crypto.randomUUID(), resolution: "" }, tokens.operator],
      ["tokens.create", { role: "superuser" }, tokens.admin],
      ["leases.claim", [1, 2], tokens.agentA],
      ["leases.claim", null, tokens.agentA],
    ];
    for (const [path, input, token] of schemaFailures) {
      const error = failure(await mutate(path, input, token), "VALIDATION", "BAD_REQUEST");
      expect(Array.isArray(error.issues) || error.zodError !== undefined, `${path} ${JSON.stringify(input)}`).toBe(true);
    }
    const queryFailures: [string, unknown][] = [
      ["events.list", { limit: 501 }],
      ["events.list", { after: -1 }],
      ["workItems.list", { limit: 0 }],
      ["workItems.list", { stage: "finished" }],
      ["leases.get", { leaseId: "123" }],
      ["workItems.get", {}],
    ];
    for (const [path, input] of queryFailures) failure(await query(path, input, tokens.operator), "VALIDATION", "BAD_REQUEST");

    // Not JSON at all.
    failure(await mutate("leases.claim", undefined, tokens.agentA, { body: "{not json" }), "VALIDATION", "BAD_REQUEST");
    failure(await mutate("workItems.create", undefined, tokens.operator, { body: '{"title": "unterminated' }), "VALIDATION", "BAD_REQUEST");
    failure(await mutate("leases.renew", undefined, tokens.agentA, { body: "" }), "VALIDATION", "BAD_REQUEST");
    const badQuery = await send("GET malformed", `${server.url}/api/trpc/workItems.get?input=%7Bbroken`, { headers: auth(tokens.operator) });
    failure(badQuery, "VALIDATION", "BAD_REQUEST");
    // The wrong verb is refused as a client error too.
    expect((await send("GET a mutation", `${server.url}/api/trpc/leases.claim?input=%7B%7D`, { headers: auth(tokens.agentA) })).status).toBe(405);
    expect((await mutate("workItems.get", { id: "valid-target" }, tokens.operator)).status).toBe(405);
  });

  it("UNAUTHENTICATED / UNAUTHORIZED for a missing, unknown, malformed or revoked token", async () => {
    failure(await query("workItems.list", {}), "UNAUTHENTICATED", "UNAUTHORIZED");
    failure(await mutate("leases.claim", {}), "UNAUTHENTICATED", "UNAUTHORIZED");
    failure(await query("workItems.list", {}, "wga_unknown-token"), "UNAUTHENTICATED", "UNAUTHORIZED");
    const basic = await send("GET basic auth", `${server.url}/api/trpc/workItems.list`, { headers: { authorization: `Basic ${tokens.operator}` } });
    failure(basic, "UNAUTHENTICATED", "UNAUTHORIZED");

    const minted = data(await mutate("tokens.create", { role: "agent", workerId: "short-lived", label: "revoke me" }, tokens.admin));
    expect(Object.keys(minted).sort()).toEqual(["id", "token"]);
    expect(data(await query("workItems.get", { id: "valid-target" }, minted.token)).id).toBe("valid-target");
    const listed = data(await query("tokens.list", {}, tokens.admin));
    const entry = listed.find((t: { id: string }) => t.id === minted.id);
    expect(entry).toMatchObject({ role: "agent", workerId: "short-lived", label: "revoke me", revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(minted.token);
    const revoked = data(await mutate("tokens.revoke", { id: minted.id }, tokens.admin));
    expect(revoked.id).toBe(minted.id);
    expect(revoked.revokedAt).toMatch(ISO_UTC);
    failure(await mutate("leases.claim", {}, minted.token), "UNAUTHENTICATED", "UNAUTHORIZED");
    failure(await query("workItems.list", {}, minted.token), "UNAUTHENTICATED", "UNAUTHORIZED");
  });

  it("FORBIDDEN for a role that may not, or an agent acting for another worker", async () => {
    await mutate("workItems.create", { id: "forbidden-item", title: "Forbidden" }, tokens.operator);
    failure(await mutate("leases.claim", { workItemId: "forbidden-item" }, tokens.operator), "FORBIDDEN", "FORBIDDEN");
    failure(await mutate("workItems.move", { id: "forbidden-item", parentId: null }, tokens.agentA), "FORBIDDEN", "FORBIDDEN");
    failure(await mutate("workItems.setPriority", { id: "forbidden-item", priority: 3 }, tokens.agentA), "FORBIDDEN", "FORBIDDEN");
    failure(await mutate("workItems.cancel", { id: "forbidden-item", reason: "mine now" }, tokens.agentA), "FORBIDDEN", "FORBIDDEN");
    failure(await mutate("attention.resolve", { id: crypto.randomUUID(), resolution: "yes" }, tokens.agentA), "FORBIDDEN", "FORBIDDEN");
    failure(await mutate("tokens.create", { role: "admin" }, tokens.operator), "FORBIDDEN", "FORBIDDEN");
    failure(await query("tokens.list", {}, tokens.agentA), "FORBIDDEN", "FORBIDDEN");
    failure(await mutate("leases.claim", { workItemId: "forbidden-item", workerId: "http-b" }, tokens.agentA), "FORBIDDEN", "FORBIDDEN");
    const { lease } = data(await mutate("leases.claim", { workItemId: "forbidden-item", durationSeconds: 60 }, tokens.agentA));
    failure(await mutate("leases.release", { leaseId: lease.id, epoch: 1, evidence: "not mine" }, tokens.agentB), "FORBIDDEN", "FORBIDDEN");
    failure(await mutate("leases.renew", { leaseId: lease.id, epoch: 1 }, tokens.operator), "FORBIDDEN", "FORBIDDEN");
    expect(data(await query("leases.get", { leaseId: lease.id }, tokens.agentB))).toEqual(lease);
  });

  it("NOT_FOUND for a named item, lease, attention request or token that does not exist", async () => {
    const missing = crypto.randomUUID();
    expect(failure(await query("workItems.get", { id: "no-such-item" }, tokens.operator), "NOT_FOUND", "NOT_FOUND").detail).toMatchObject({ id: "no-such-item" });
    failure(await query("leases.get", { leaseId: missing }, tokens.operator), "NOT_FOUND", "NOT_FOUND");
    failure(await query("attention.get", { id: missing }, tokens.operator), "NOT_FOUND", "NOT_FOUND");
    failure(await mutate("attention.resolve", { id: missing, resolution: "yes" }, tokens.operator), "NOT_FOUND", "NOT_FOUND");
    failure(await mutate("tokens.revoke", { id: missing }, tokens.admin), "NOT_FOUND", "NOT_FOUND");
    failure(await mutate("leases.claim", { workItemId: "no-such-item" }, tokens.agentA), "NOT_FOUND", "NOT_FOUND");
    failure(await mutate("workItems.setPriority", { id: "no-such-item", priority: 1 }, tokens.operator), "NOT_FOUND", "NOT_FOUND");
    failure(await query("leases.history", { workItemId: "no-such-item" }, tokens.operator), "NOT_FOUND", "NOT_FOUND");
    failure(await mutate("workItems.create", { title: "orphan", parentId: "no-such-item" }, tokens.operator), "NOT_FOUND", "NOT_FOUND");
    failure(await mutate("workItems.addDependency", { workItemId: "valid-target", dependsOnId: "no-such-item" }, tokens.operator), "NOT_FOUND", "NOT_FOUND");
  });

  it("the CONFLICT reasons, each with its detail", async () => {
    const op = tokens.operator;
    await mutate("workItems.create", { id: "c-blocker", title: "Blocker" }, op);
    await mutate("workItems.create", { id: "c-blocked", title: "Blocked", dependsOn: ["c-blocker"] }, op);

    // NOT_CLAIMABLE with detail.stage.
    expect(failure(await mutate("leases.claim", { workItemId: "c-blocked" }, tokens.agentA), "NOT_CLAIMABLE", "CONFLICT").detail)
      .toMatchObject({ stage: "blocked" });
    const { lease } = data(await mutate("leases.claim", { workItemId: "c-blocker", durationSeconds: 60 }, tokens.agentA));
    expect(failure(await mutate("leases.claim", { workItemId: "c-blocker" }, tokens.agentB), "NOT_CLAIMABLE", "CONFLICT").detail)
      .toMatchObject({ stage: "leased" });

    // ITEM_LEASED: an operator may not pre-empt the live lease.
    failure(await mutate("workItems.cancel", { id: "c-blocker", reason: "stop" }, op), "ITEM_LEASED", "CONFLICT");

    // LEASE_NOT_CURRENT with detail.kind.
    expect(failure(await mutate("leases.renew", { leaseId: lease.id, epoch: 2 }, tokens.agentA), "LEASE_NOT_CURRENT", "CONFLICT").detail)
      .toMatchObject({ kind: "unknown" });
    data(await mutate("leases.release", { leaseId: lease.id, epoch: 1, evidence: "done" }, tokens.agentA));
    expect(failure(await mutate("leases.note", { leaseId: lease.id, epoch: 1, content: "late" }, tokens.agentA), "LEASE_NOT_CURRENT", "CONFLICT").detail)
      .toMatchObject({ kind: "ended" });
    expect(failure(await mutate("leases.claim", { workItemId: "c-blocker" }, tokens.agentB), "NOT_CLAIMABLE", "CONFLICT").detail)
      .toMatchObject({ stage: "released" });

    // ALREADY_TERMINAL.
    failure(await mutate("workItems.cancel", { id: "c-blocker", reason: "too late" }, op), "ALREADY_TERMINAL", "CONFLICT");
    failure(await mutate("workItems.setPriority", { id: "c-blocker", priority: 9 }, op), "ALREADY_TERMINAL", "CONFLICT");

    // DEPENDENCY_CYCLE, including the self-edge; DUPLICATE ids and edges.
    await mutate("workItems.create", { id: "c-x", title: "X" }, op);
    await mutate("workItems.create", { id: "c-y", title: "Y", dependsOn: ["c-x"] }, op);
    failure(await mutate("workItems.addDependency", { workItemId: "c-x", dependsOnId: "c-x" }, op), "DEPENDENCY_CYCLE", "CONFLICT");
    failure(await mutate("workItems.addDependency", { workItemId: "c-x", dependsOnId: "c-y" }, op), "DEPENDENCY_CYCLE", "CONFLICT");
    failure(await mutate("workItems.addDependency", { workItemId: "c-y", dependsOnId: "c-x" }, op), "DUPLICATE", "CONFLICT");
    failure(await mutate("workItems.create", { id: "c-x", title: "X again" }, op), "DUPLICATE", "CONFLICT");

    // ALREADY_RESOLVED.
    const claimedX = data(await mutate("leases.claim", { workItemId: "c-x", durationSeconds: 60 }, tokens.agentB));
    const asked = data(await mutate("attention.request", {
      leaseId: claimedX.lease.id, epoch: 1, kind: "decision", question: "Which?", options: ["a", "b"],
    }, tokens.agentB));
    expect(asked.endedLease).toMatchObject({ id: claimedX.lease.id, outcome: "attention_requested" });
    expect(asked.request).toMatchObject({ status: "open", blocking: true, options: ["a", "b"], resolvedAt: null });
    const resolved = data(await mutate("attention.resolve", { id: asked.request.id, resolution: "a" }, op));
    expect(resolved.request).toMatchObject({ status: "resolved", resolution: "a" });
    expect(resolved.request.resolvedAt).toMatch(ISO_UTC);
    failure(await mutate("attention.resolve", { id: asked.request.id, resolution: "b" }, op), "ALREADY_RESOLVED", "CONFLICT");

    // IDEMPOTENCY_KEY_REUSED.
    const first = data(await mutate("workItems.create", { id: "c-idem", title: "Once", idempotencyKey: "create-c-idem" }, op));
    expect(data(await mutate("workItems.create", { id: "c-idem", title: "Once", idempotencyKey: "create-c-idem" }, op))).toEqual(first);
    failure(await mutate("workItems.create", { id: "c-idem", title: "Twice", idempotencyKey: "create-c-idem" }, op), "IDEMPOTENCY_KEY_REUSED", "CONFLICT");
  });
});

describe("every reply of this file", () => {
  it("is JSON, never a server error, and carries every time as an ISO-8601 UTC string", () => {
    expect(replies.length).toBeGreaterThan(80);
    let times = 0;
    const visit = (value: unknown, where: string, key = ""): void => {
      if (typeof value === "string") {
        if (/(At|^now|^expiresAt|^endedAt)$/.test(key) || /^\d{4}-\d{2}-\d{2}[T ]\d{2}:/.test(value)) {
          times++;
          expect(value, where).toMatch(ISO_UTC);
        }
      } else if (Array.isArray(value)) {
        value.forEach((item) => visit(item, where, key));
      } else if (value && typeof value === "object") {
        for (const [k, v] of Object.entries(value)) visit(v, `${where}.${k}`, k);
      }
    };
    for (const { what, reply } of replies) {
      expect(reply.status, what).toBeLessThan(500);
      expect(reply.body.unparsable, what).toBeUndefined();
      if (reply.body.error) expect(typeof reply.body.error.data?.reason, what).toBe("string");
      visit(reply.body, what);
    }
    expect(times).toBeGreaterThan(50);
  });
});
