import { readFileSync } from "node:fs";
import SwaggerParser from "@apidevtools/swagger-parser";
import Ajv2020 from "ajv/dist/2020";
import { describe, expect } from "vitest";
import { databaseTest } from "../support/fixtures";
import { callerAs } from "../support/app";

/*
 * GET /api/openapi.json (docs/api.md "Every language"): a valid OpenAPI 3.1 document of
 * exactly the procedures docs/api.md lists, each with its kind and role, and schemas that the
 * server's real answers satisfy.
 */

const it = databaseTest();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the document is plain JSON
type Json = any;

/** Every `| \`noun.verb\` | kind | role | …` row of docs/api.md's procedure tables (a row may name two: `a` / `b`). */
function documentedProcedures(): Map<string, { kind: string; role: string }> {
  const procedures = new Map<string, { kind: string; role: string }>();
  for (const line of readFileSync("docs/api.md", "utf8").split("\n")) {
    const cells = line.split(/(?<!\\)\|/).map((cell) => cell.trim());
    if (cells.length < 5 || !/^`[a-zA-Z]+\.[a-zA-Z]+`/.test(cells[1]!)) continue;
    const names = [...cells[1]!.matchAll(/`([a-zA-Z]+\.[a-zA-Z]+)`/g)].map((match) => match[1]!);
    const kinds = cells[2]!.split("/").map((kind) => kind.trim());
    if (!kinds.every((kind) => ["query", "mutation", "subscription"].includes(kind))) continue;
    names.forEach((name, index) => procedures.set(name, { kind: kinds[index] ?? kinds[0]!, role: cells[3]! }));
  }
  return procedures;
}

/** docs/api.md's role column as the document's `x-work-graph-access`. */
function accessOf(role: string): Json {
  if (role === "none") return "public";
  if (role === "*") return "authenticated";
  if (role === "admin") return ["admin"];
  const roles = role.split(",").map((part) => ({ A: "agent", O: "operator" })[part.trim()]);
  return [...roles, "admin"];
}

async function fetchDocument(url: string): Promise<Json> {
  const response = await fetch(`${url}/api/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/json");
  return response.json();
}

describe("GET /api/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document, served without a token", async ({ server }) => {
    const document = await fetchDocument(server.url);
    expect(document.openapi).toMatch(/^3\.1\./);
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeTruthy();
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("has every procedure of docs/api.md, with its kind and role, and nothing else", async ({ server }) => {
    const document = await fetchDocument(server.url);
    const documented = documentedProcedures();
    expect(documented.size).toBeGreaterThan(40);
    const inDocument = Object.keys(document.paths).map((path) => path.replace(/^\/api\/trpc\//, ""));
    expect([...inDocument].sort()).toEqual([...documented.keys()].sort());

    for (const [name, { kind, role }] of documented) {
      const path = document.paths[`/api/trpc/${name}`];
      const [method, operation] = Object.entries(path)[0] as [string, Json];
      expect({ name, method }).toEqual({ name, method: kind === "mutation" ? "post" : "get" });
      expect({ name, access: operation["x-work-graph-access"] }).toEqual({ name, access: accessOf(role) });
      expect({ name, security: operation.security }).toEqual({ name, security: role === "none" ? [] : [{ bearerAuth: [] }] });
      if (kind === "subscription") expect(Object.keys(operation.responses["200"].content)).toEqual(["text/event-stream"]);
    }
  });

  it("lists the error envelope with every reason, and inputs as the server validates them", async ({ server }) => {
    const document = await fetchDocument(server.url);
    const reasons = document.components.schemas.Error.properties.error.properties.data.properties.reason.enum;
    const documentedReasons = [...readFileSync("docs/api.md", "utf8").matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]);
    expect([...reasons].sort()).toEqual([...documentedReasons].sort());

    const claim = document.paths["/api/trpc/leases.claim"].post;
    const claimInput = claim.requestBody.content["application/json"].schema;
    expect(claimInput.properties.waitSeconds).toMatchObject({ type: "number", minimum: 0, maximum: 60, default: 0 });
    expect(claimInput.properties.durationSeconds).toMatchObject({ type: "integer", minimum: 1, maximum: 86_400, default: 900 });
    expect(Object.keys(claim.responses).sort()).toEqual(["200", "400", "401", "403", "404", "409", "413", "500", "503"]);
    expect(claim.responses["409"].description).toContain("LEASE_NOT_CURRENT");
    expect(Object.keys(document.paths["/api/trpc/health.check"].get.responses).sort()).toEqual(["200", "400", "404", "409", "413", "500", "503"]);

    const get = document.paths["/api/trpc/workItems.get"].get;
    expect(get.parameters).toEqual([expect.objectContaining({ name: "input", in: "query", required: true })]);
    expect(get.parameters[0].content["application/json"].schema.required).toEqual(["id"]);

    // Every query describes `?input=`, also one that takes nothing (its input may be left out).
    const queries = Object.entries(document.paths as Record<string, Json>).filter(([, operations]) => operations.get);
    for (const [route, { get: query }] of queries) {
      expect({ route, input: query.parameters.filter((parameter: Json) => parameter.name === "input" && parameter.in === "query").length }).toEqual({ route, input: 1 });
    }
    for (const route of ["/api/trpc/tokens.list", "/api/trpc/webhooks.list"]) {
      expect(document.paths[route].get.parameters).toEqual([expect.objectContaining({ name: "input", in: "query", required: false })]);
    }
  });

  it("describes the answers the server really gives, successes and errors", async ({ server, database }) => {
    const document = await fetchDocument(server.url);
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema({ $id: "openapi", components: document.components });
    // An answer's schema refers to the document's components: resolved against the document added as "openapi".
    const check = (schema: Json, value: unknown) => {
      const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')));
      expect({ valid: validate(value), errors: validate.errors ?? null }).toEqual({ valid: true, errors: null });
    };
    const answerSchema = (procedure: string) => {
      const [operation] = Object.values(document.paths[`/api/trpc/${procedure}`]) as Json[];
      return operation.responses["200"].content["application/json"].schema;
    };

    const { token: operator } = await callerAs(database.db, "operator");
    const { token: agent } = await callerAs(database.db, "agent", "openapi-worker");
    const call = async (token: string, procedure: string, input: unknown, method: "GET" | "POST") => {
      const url = `${server.url}/api/trpc/${procedure}${method === "GET" ? `?input=${encodeURIComponent(JSON.stringify(input))}` : ""}`;
      const response = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: method === "POST" ? JSON.stringify(input) : undefined });
      return { status: response.status, body: (await response.json()) as Json };
    };

    const created = await call(operator, "workItems.create", { id: "openapi-1", title: "Describe me", requires: [] }, "POST");
    check(answerSchema("workItems.create"), created.body);
    const claimed = await call(agent, "leases.claim", { workItemId: "openapi-1" }, "POST");
    check(answerSchema("leases.claim"), claimed.body);
    check(answerSchema("leases.note"), (await call(agent, "leases.note", { leaseId: claimed.body.result.data.lease.id, epoch: 1, content: "hi" }, "POST")).body);
    check(answerSchema("workItems.list"), (await call(operator, "workItems.list", {}, "GET")).body);
    check(answerSchema("dashboard.neighbourhood"), (await call(operator, "dashboard.neighbourhood", { id: "openapi-1" }, "GET")).body);
    check(answerSchema("dashboard.summary"), (await call(operator, "dashboard.summary", {}, "GET")).body);

    const stale = await call(agent, "leases.renew", { leaseId: claimed.body.result.data.lease.id, epoch: 7 }, "POST");
    expect(stale.status).toBe(409);
    check({ $ref: "#/components/schemas/Error" }, stale.body);
    expect(stale.body.error.data.reason).toBe("LEASE_NOT_CURRENT");
  });
});

describe("GET /api/docs", () => {
  it("serves Swagger UI's page and files from the app, under a policy that allows no other origin", async ({ server }) => {
    const page = await fetch(`${server.url}/api/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    const html = await page.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) {
      expect(source).toMatch(/^\/api\/docs\//);
      expect((await fetch(`${server.url}${source}`)).status).toBe(200);
    }
    expect((await fetch(`${server.url}/api/docs/../../package.json`)).status).not.toBe(200);
    expect((await fetch(`${server.url}/api/docs/index.html`)).status).toBe(404);
  });
});
