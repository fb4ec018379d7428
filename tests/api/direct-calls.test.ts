import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";

/*
 * A plain call (one query by GET, one mutation by POST) is answered by server/trpc/http.ts
 * directly, anything else by tRPC's fetch adapter. A batch of one is the same call through the
 * adapter: its one element must equal the plain answer, status and headers included, for
 * answers and for every kind of refusal.
 */

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
let tokens: { operator: string; agent: string };

beforeAll(async () => {
  database = await createTestDatabase({ poolSize: 4 });
  server = await startTestServer(database.instance);
  tokens = { operator: (await callerAs(database.instance, "operator")).token, agent: (await callerAs(database.instance, "agent", "direct-a")).token };
  await fetch(`${server.url}/api/trpc/workItems.create`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.operator}` },
    body: JSON.stringify({ id: "direct-item", title: "Direct", description: "ünïcödé ✓" }),
  });
});
afterAll(async () => {
  await server.close();
  await database.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | null>;
  text: string;
}

async function answer(url: string, init: RequestInit): Promise<Answer> {
  const response = await fetch(url, init);
  const headers = Object.fromEntries(["content-type", "cache-control", "vary", "x-content-type-options"].map((name) => [name, response.headers.get(name)]));
  expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  return { status: response.status, headers, text: await response.text() };
}

const auth = (token: string | undefined): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

/** The plain call and the same call as a batch of one, with the batch's element unwrapped. */
async function both(kind: "GET" | "POST", path: string, input: string | undefined, token: string | undefined, extraHeaders: Record<string, string> = {}) {
  const headers = { ...auth(token), ...extraHeaders };
  const plainUrl = `${server.url}/api/trpc/${path}${kind === "GET" && input !== undefined ? `?input=${encodeURIComponent(input)}` : ""}`;
  const batchInput = input === undefined ? undefined : input.trim() === "" || !isJson(input) ? input : `{"0":${input.replace(/^\uFEFF/, "")}}`;
  const batchUrl = `${server.url}/api/trpc/${path}?batch=1${kind === "GET" && batchInput !== undefined ? `&input=${encodeURIComponent(batchInput)}` : ""}`;
  const init = (body: string | undefined): RequestInit => (kind === "GET" ? { headers } : { method: "POST", headers, body: body ?? "" });
  const plain = await answer(plainUrl, init(input));
  const batch = await answer(batchUrl, init(input !== undefined && input.startsWith("\uFEFF") ? `\uFEFF${batchInput}` : batchInput));
  const [element] = JSON.parse(batch.text) as unknown[];
  return { plain: { ...plain, text: undefined, body: JSON.parse(plain.text) as unknown }, batch: { ...batch, text: undefined, body: element } };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text.replace(/^\uFEFF/, ""));
    return true;
  } catch {
    return false;
  }
}

describe("plain calls answer exactly as tRPC's adapter does", () => {
  it.each([
    ["a query's answer", "GET", "workItems.get", `{"id":"direct-item"}`, "operator"],
    ["a query without input", "GET", "workers.list", undefined, "operator"],
    ["NOT_FOUND", "GET", "workItems.get", `{"id":"no-such-item"}`, "operator"],
    ["VALIDATION of a query's input", "GET", "workItems.get", `{"id":5}`, "operator"],
    ["a query's input that is not JSON", "GET", "workItems.get", `{"id":`, "operator"],
    ["a query missing its input", "GET", "workItems.get", undefined, "operator"],
    ["FORBIDDEN", "GET", "workers.list", undefined, "agent"],
    ["UNAUTHENTICATED query", "GET", "workItems.get", `{"id":"direct-item"}`, undefined],
    ["LEASE_NOT_CURRENT", "POST", "leases.release", `{"leaseId":"00000000-0000-4000-8000-000000000000","epoch":1,"evidence":"x"}`, "agent"],
    ["VALIDATION of a mutation's input", "POST", "leases.release", `{"leaseId":"not-a-uuid","epoch":1,"evidence":"x"}`, "agent"],
    ["a body that is not JSON", "POST", "leases.renew", `{"leaseId":`, "agent"],
    ["an empty body", "POST", "leases.renew", "", "agent"],
    ["a body starting with a byte order mark", "POST", "leases.release", `\uFEFF{"leaseId":"00000000-0000-4000-8000-000000000000","epoch":2,"evidence":"ü"}`, "agent"],
    ["an unknown worker's idle claim", "POST", "leases.claim", `{"workItemId":"no-such-item"}`, "agent"],
  ] as const)("%s", async (_what, kind, path, input, who) => {
    const { plain, batch } = await both(kind, path, input, who ? tokens[who] : undefined);
    expect(plain).toEqual(batch);
  });

  it("a mutation's answer (the created item, ids and times aside)", async () => {
    const create = (id: string, batch: boolean) =>
      answer(`${server.url}/api/trpc/workItems.create${batch ? "?batch=1" : ""}`, {
        method: "POST",
        headers: auth(tokens.operator),
        body: batch ? `{"0":{"id":"${id}","title":"Same"}}` : `{"id":"${id}","title":"Same"}`,
      });
    const plain = await create("direct-plain", false);
    const batch = await create("direct-batch", true);
    const normalized = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll(/direct-(plain|batch)/g, "ID").replaceAll(/"\d{4}-\d\d-\d\dT[^"]*"/g, '"TIME"')) as unknown;
    expect(plain.status).toBe(200);
    expect({ ...plain, text: normalized(JSON.parse(plain.text)) }).toEqual({ ...batch, text: normalized((JSON.parse(batch.text) as unknown[])[0]) });
  });
});
