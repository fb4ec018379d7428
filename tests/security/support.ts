import { readFileSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import type { z } from "zod";
import { appRouter } from "../../server/trpc/root";

type AnySchema = z.ZodType;
interface ProcedureInfo {
  path: string;
  type: "query" | "mutation" | "subscription";
  input: AnySchema | undefined;
}

/** Every procedure the router serves, with its input schema. */
export function procedures(): ProcedureInfo[] {
  const record = appRouter._def.procedures as unknown as Record<string, { _def: { type: "query" | "mutation" | "subscription"; inputs: AnySchema[] } }>;
  return Object.entries(record).map(([procedurePath, procedure]) => ({
    path: procedurePath,
    type: procedure._def.type,
    input: procedure._def.inputs[0],
  }));
}

const def = (schema: AnySchema) => (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;

/**
 * Paths (object keys, and 0 for an array element) to every string-valued field of a schema,
 * with that field's schema. Wrappers (optional, nullable, default) are looked through.
 */
export function fields(schema: AnySchema | undefined, prefix: (string | number)[] = []): { path: (string | number)[]; schema: AnySchema; kind: string }[] {
  if (!schema) return [];
  const d = def(schema);
  switch (d.type) {
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "nonoptional":
      return fields(d.innerType as AnySchema, prefix);
    case "object":
      return Object.entries(d.shape as Record<string, AnySchema>).flatMap(([key, value]) => fields(value, [...prefix, key]));
    case "array":
      return [{ path: prefix, schema, kind: "array" }, ...fields(d.element as AnySchema, [...prefix, 0])];
    case "union":
      return (d.options as AnySchema[]).flatMap((option) => fields(option, prefix)).filter((f, i, all) => all.findIndex((g) => g.path.join(".") === f.path.join(".") && g.kind === f.kind) === i);
    default:
      return [{ path: prefix, schema, kind: d.type }];
  }
}

/** An object with `value` at `fieldPath` (arrays for numeric steps). */
export function setAt(fieldPath: (string | number)[], value: unknown): unknown {
  if (fieldPath.length === 0) return value;
  const [head, ...rest] = fieldPath;
  if (typeof head === "number") return [setAt(rest, value)];
  return { [head!]: setAt(rest, value) };
}

const docs = readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "api.md"), "utf8");

/** The error reasons of docs/api.md's Errors table. */
export const DOCUMENTED_REASONS = new Set([...docs.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]!));

const v1Procedures = docs.slice(docs.indexOf("\n## Procedures"), docs.indexOf("\n## ", docs.indexOf("\n## Procedures") + 1));

/** Procedure names in docs/api.md's v1 procedures table (`a` / `b` rows name two). */
export const DOCUMENTED_PROCEDURES = [...v1Procedures.matchAll(/^\| `([a-zA-Z]+\.[a-zA-Z]+)`(?: \/ `([a-zA-Z]+\.[a-zA-Z]+)`)? \|/gm)].flatMap((match) =>
  [match[1]!, match[2]].filter((name): name is string => Boolean(name)),
);

/** What an error message must never show. */
export const INTERNALS = /prisma|\$queryRaw|\$executeRaw|invocation|SELECT |INSERT |UPDATE |DELETE FROM|\bat .+\.(ts|js):\d+|postgres|SQLSTATE|Code: \d/i;

/** A digest of every row of every table: equal before and after means nothing changed. */
export async function databaseDigest(client: pg.Client): Promise<Record<string, string>> {
  const { rows: tables } = await client.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
  );
  const digest: Record<string, string> = {};
  for (const { name } of tables) {
    const { rows } = await client.query<{ md5: string | null; n: number }>(
      `SELECT md5(string_agg(t::text, E'\\n' ORDER BY t::text)) AS md5, count(*)::int AS n FROM "${name}" t`,
    );
    digest[name] = `${rows[0]!.n}:${rows[0]!.md5 ?? "-"}`;
  }
  const { rows: sequences } = await client.query<{ name: string; value: string | null }>(
    "SELECT sequencename AS name, last_value::text AS value FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1",
  );
  for (const sequence of sequences) digest[`sequence ${sequence.name}`] = sequence.value ?? "-";
  return digest;
}

export interface Reply {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw JSON from the wire
  body: any;
  text: string;
}

/** One API call over HTTP: a query as GET ?input=, a mutation as POST with the JSON body (or `rawBody`). */
/**
 * Opens a subscription (Server-Sent Events) and returns the first `serialized-error` frame's
 * error (tRPC reports a refused input inside the stream, after a 200), or null when none came
 * within `timeoutMs`.
 */
export async function subscriptionError(baseUrl: string, path: string, input: unknown, headers: Record<string, string>, timeoutMs = 5_000): Promise<{ status: number; error: { message: string; data: { reason: string } } | null }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const response = await fetch(`${baseUrl}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers, signal: abort.signal });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (chunk.done) break;
      text += chunk.value;
      const frame = /event: serialized-error\ndata: (.*)\n/.exec(text);
      if (frame) return { status: response.status, error: JSON.parse(frame[1]!) };
    }
    return { status: response.status, error: null };
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

export async function call(baseUrl: string, procedure: { path: string; type: "query" | "mutation" }, input: unknown, headers: Record<string, string>, rawBody?: string): Promise<Reply> {
  const url =
    procedure.type === "query"
      ? `${baseUrl}/api/trpc/${procedure.path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`
      : `${baseUrl}/api/trpc/${procedure.path}`;
  const response = await fetch(url, {
    method: procedure.type === "query" ? "GET" : "POST",
    headers: { ...headers, ...(procedure.type === "mutation" ? { "content-type": "application/json" } : {}) },
    body: procedure.type === "mutation" ? (rawBody ?? JSON.stringify(input ?? {})) : undefined,
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}
