import type { AnyProcedure } from "@trpc/server";
import { namedShapes, outputs, type ProcedurePath, type Reason } from "@work-graph/contract";
import { z } from "zod";
import { TRPC_CODE_BY_REASON } from "../errors";
import type { ProcedureMeta } from "../trpc/init";
import { appRouter } from "../trpc/root";

/**
 * The OpenAPI 3.1 document of GET /api/openapi.json, made from the router itself: each
 * procedure's kind, its role (procedure meta), the zod schema it validates its input with,
 * and its output schema (@work-graph/contract's `outputs`), converted by zod 4's own `z.toJSONSchema`.
 * OpenAPI 3.1 schemas are JSON Schema 2020-12, which is what zod emits, so no generator
 * (trpc-openapi and its forks want per-procedure REST paths and their own meta, and lag tRPC
 * and zod majors) stands between the validation and the document: what the server checks is
 * what the document says.
 */

type JsonSchema = Record<string, unknown>;

const REASONS = Object.keys(TRPC_CODE_BY_REASON) as Reason[];

/** The HTTP status tRPC answers each code a reason maps to with. */
const HTTP_STATUS: Record<string, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
};

const statusOfReason = (reason: Reason) => HTTP_STATUS[TRPC_CODE_BY_REASON[reason]]!;

const errorEnvelope: JsonSchema = {
  type: "object",
  description: "A tRPC error; `error.data.reason` says why (docs/api.md \"Errors\").",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["message", "code", "data"],
      properties: {
        message: { type: "string" },
        code: { type: "integer", description: "JSON-RPC error code" },
        data: {
          type: "object",
          required: ["code", "httpStatus", "reason"],
          properties: {
            code: { type: "string", description: "the tRPC code" },
            httpStatus: { type: "integer" },
            path: { type: "string" },
            reason: { type: "string", enum: REASONS },
            detail: { type: "object", additionalProperties: true, description: "reason-specific facts, e.g. LEASE_NOT_CURRENT's `kind`, NOT_CLAIMABLE's `stage`" },
            issues: { type: "array", items: { type: "object" }, description: "VALIDATION: the schema's issues" },
            zodError: { description: "VALIDATION: the issues by field" },
          },
        },
      },
    },
  },
};

/** One error response per HTTP status, listing the reasons that come with it. */
function errorResponses(): Record<string, JsonSchema> {
  const byStatus = new Map<number, string[]>();
  for (const reason of REASONS) byStatus.set(statusOfReason(reason), [...(byStatus.get(statusOfReason(reason)) ?? []), reason]);
  return Object.fromEntries([...byStatus].map(([status, reasons]) => [
    String(status),
    { description: `reason: ${reasons.join(", ")}`, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
  ]));
}

const componentRef = (id: string) => `#/components/schemas/${id}`;

/**
 * Output components: docs/api.md's named shapes (WorkItem, Lease, …) under their names, and
 * each procedure's output under the first procedure path that answers it. Objects are left
 * open (no `additionalProperties: false`): answers may gain fields (docs/api.md "v3 additions").
 */
function outputComponents() {
  const registry = z.registry<{ id: string }>();
  for (const [name, schema] of Object.entries(namedShapes)) registry.add(schema, { id: name });
  const refOf = {} as Record<ProcedurePath, string>;
  for (const [path, schema] of Object.entries(outputs) as [ProcedurePath, z.ZodType][]) {
    if (!registry.has(schema)) registry.add(schema, { id: `${path}.output` });
    refOf[path] = componentRef(registry.get(schema)!.id);
  }
  const { schemas } = z.toJSONSchema(registry, {
    io: "output",
    uri: componentRef,
    unrepresentable: "any",
    override: ({ jsonSchema }) => {
      withoutNoise(jsonSchema);
      if (jsonSchema.additionalProperties === false) delete jsonSchema.additionalProperties;
    },
  });
  const components = Object.fromEntries(Object.entries(schemas).map(([id, { $schema: _, $id: __, ...schema }]) => [id, schema as JsonSchema]));
  return { components, refOf };
}

/** Left out as noise: a bare `int()`'s bounds (±2^53, true of any JSON number), and zod's regex for what `format: date-time` says. */
function withoutNoise(jsonSchema: { minimum?: number; maximum?: number; format?: string; pattern?: string }) {
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
  if (jsonSchema.format === "date-time") delete jsonSchema.pattern;
}

/** A procedure without an input schema ignores what it is sent: `{}` says so. */
const noInput = z.object({});

function inputSchema(procedure: AnyProcedure): JsonSchema | null {
  const [declared] = procedure._def.inputs as z.ZodType[];
  // A mutation's body may be left out; a query's `?input=` is described for every query, also those that take nothing.
  const input = declared ?? (procedure._def.type === "mutation" ? undefined : noInput);
  if (!input) return null;
  const { $schema: _, ...schema } = z.toJSONSchema(input, { io: "input", unrepresentable: "any", override: ({ jsonSchema }) => withoutNoise(jsonSchema) }) as JsonSchema;
  return schema;
}

const acceptsNoInput = (procedure: AnyProcedure) => {
  const [input] = procedure._def.inputs as z.ZodType[];
  return !input || input.safeParse(undefined).success;
};

function accessText(access: ProcedureMeta["access"]): string {
  if (access === "public") return "No token needed.";
  if (access === "authenticated") return "Any token (agent, operator or admin).";
  return `Roles: ${access.join(", ")}.`;
}

function operation(path: ProcedurePath, procedure: AnyProcedure, outputRef: string) {
  const { type } = procedure._def;
  const { access } = procedure._def.meta as ProcedureMeta;
  const input = inputSchema(procedure);
  const output = { $ref: outputRef };
  const [noun] = path.split(".");
  const base = {
    operationId: path,
    tags: [noun],
    summary: `${path} (${type})`,
    description: accessText(access),
    "x-work-graph-access": access,
    security: access === "public" ? [] : [{ bearerAuth: [] }],
  };
  const success = (contentType: string, schema: JsonSchema, description: string) => ({ 200: { description, content: { [contentType]: { schema } } } });
  const result = { type: "object", required: ["result"], properties: { result: { type: "object", required: ["data"], properties: { data: output } } } };
  // Without a token there is no role to refuse.
  const { 401: _, 403: __, ...publicResponses } = errorResponses();
  const responses = access === "public" ? publicResponses : errorResponses();
  if (type === "mutation") {
    return {
      post: {
        ...base,
        ...(input ? { requestBody: { required: !acceptsNoInput(procedure), content: { "application/json": { schema: input } } } } : {}),
        responses: { ...success("application/json", result, "the procedure's answer"), ...responses },
      },
    };
  }
  const parameters = input
    ? [{ name: "input", in: "query", required: !acceptsNoInput(procedure), description: "the input as URL-encoded JSON", content: { "application/json": { schema: input } } }]
    : [];
  const answer = type === "subscription"
    ? success("text/event-stream", { type: "string", description: "Server-Sent Events; each `data:` line is one Event (contentSchema), its `id:` the event's sequence", contentSchema: output }, "a stream of events")
    : success("application/json", result, "the procedure's answer");
  return { get: { ...base, parameters, responses: { ...answer, ...responses } } };
}

let cached: JsonSchema | null = null;

export function openApiDocument(): JsonSchema {
  if (cached) return cached;
  const { components, refOf } = outputComponents();
  cached = {
    openapi: "3.1.0",
    info: {
      title: "Work Graph API",
      version: "3",
      description: "tRPC over HTTP without a transformer: a query is GET /api/trpc/<procedure>?input=<URL-encoded JSON>, a mutation POST /api/trpc/<procedure> with the input as its JSON body. The contract, with every rule, is docs/api.md.",
    },
    servers: [{ url: "/" }],
    paths: Object.fromEntries(
      // At run time a flat record of every procedure by path (its type is the nested router's);
      // server/trpc/root.ts's compile-time check keeps those paths and the contract's ProcedurePath the same.
      (Object.entries(appRouter._def.procedures as Record<string, unknown>) as [ProcedurePath, AnyProcedure][]).map(([path, procedure]) => [`/api/trpc/${path}`, operation(path, procedure, refOf[path])]),
    ),
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "a token from tokens.create (or WORK_GRAPH_ADMIN_TOKEN)" } },
      schemas: { Error: errorEnvelope, ...components },
    },
  };
  return cached;
}
