import type pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { insertReadyItems } from "../support/factories";
import { logger } from "../../server/log";

let database: TestDatabase;
let sql: pg.Client;
let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  logger().level = "info"; // vitest.config.ts quiets the request log for every other file
  database = await createTestDatabase();
  sql = await database.connect();
  server = await startTestServer(database.instance);
});
afterAll(async () => {
  await server.close();
  await database.close();
});

/** Everything the process writes to stdout while `work` runs. */
async function captureStdout(work: () => Promise<void>): Promise<string> {
  const chunks: string[] = [];
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    return true;
  });
  try {
    await work();
  } finally {
    write.mockRestore();
  }
  return chunks.join("");
}
afterEach(() => vi.restoreAllMocks());

const call = (path: string, token: string, body: unknown) =>
  fetch(`${server.url}/api/trpc/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("request logs", () => {
  it("one JSON line per request with the x-request-id, procedure, role, worker and duration, and no token", async () => {
    await insertReadyItems(sql, "logged", 1);
    const agent = await callerAs(database.instance, "agent", "log-worker");
    let requestId: string | null = null;
    const output = await captureStdout(async () => {
      const response = await call("leases.claim", agent.token, { workItemId: "logged-00001" });
      expect(response.status).toBe(200);
      requestId = response.headers.get("x-request-id");
    });
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const lines = output.trim().split("\n");
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({
      requestId,
      procedure: "leases.claim",
      role: "agent",
      workerId: "log-worker",
      status: 200,
      msg: "request",
    });
    expect(line.durationMs).toBeGreaterThan(0);
    expect(line.reason).toBeUndefined();
    expect(output).not.toContain(agent.token);
    expect(output).not.toContain(agent.token.slice(4)); // not even the secret without its prefix
  });

  it("a refused call logs its reason; a request id is new for every request", async () => {
    const operator = await callerAs(database.instance, "operator");
    const ids: (string | null)[] = [];
    const output = await captureStdout(async () => {
      for (let i = 0; i < 2; i++) {
        const response = await call("leases.claim", operator.token, {});
        expect(response.status).toBe(403);
        ids.push(response.headers.get("x-request-id"));
      }
      const bad = await call("workItems.create", operator.token, { title: 42 });
      expect(bad.status).toBe(400);
      ids.push(bad.headers.get("x-request-id"));
    });
    const lines = output.trim().split("\n").map((text) => JSON.parse(text));
    expect(lines.map((line) => line.requestId)).toEqual(ids);
    expect(new Set(ids).size).toBe(3);
    expect(lines[0]).toMatchObject({ procedure: "leases.claim", role: "operator", workerId: null, status: 403, reason: "FORBIDDEN" });
    expect(lines[2]).toMatchObject({ procedure: "workItems.create", status: 400, reason: "VALIDATION" });
    expect(output).not.toContain(operator.token);
  });

  it("a call without a token logs UNAUTHENTICATED with no role", async () => {
    const output = await captureStdout(async () => {
      const response = await fetch(`${server.url}/api/trpc/dashboard.summary`, { headers: { authorization: "Bearer wgo_guessed-secret-value" } });
      expect(response.status).toBe(401);
    });
    const line = JSON.parse(output.trim());
    expect(line).toMatchObject({ procedure: "dashboard.summary", role: null, status: 401, reason: "UNAUTHENTICATED" });
    expect(output).not.toContain("guessed-secret-value");
  });
});
