// npm run generate:python — writes clients/python/src/work_graph/_types.py from the OpenAPI
// document (server/http/openapi.ts, made from @work-graph/contract): a TypedDict for every shape,
// procedure input and answer, and a Literal for each of the contract's name lists the document
// carries. tests/python/types.test.ts fails while the file on disk differs from this output.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ATTENTION_KINDS, LEASE_OUTCOMES, REASONS, ROLES, STAGES } from "@work-graph/contract";
import { openApiDocument } from "../server/http/openapi";

export const PYTHON_TYPES_FILE = path.resolve(import.meta.dirname, "../clients/python/src/work_graph/_types.py");

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  $ref?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  default?: unknown;
};

/** The contract's lists, by the name the Python client knows them under: an enum with exactly these values is that alias. */
const NAMED_LISTS: [name: string, values: readonly string[]][] = [
  ["Stage", STAGES],
  ["LeaseOutcome", LEASE_OUTCOMES],
  ["AttentionKind", ATTENTION_KINDS],
  ["Role", ROLES],
  ["Reason", REASONS],
];

const PYTHON_KEYWORDS = new Set(["from", "import", "class", "def", "global", "in", "is", "lambda", "pass", "return", "with", "yield", "not", "and", "or", "if", "else", "for", "while", "try", "except", "raise", "del", "as", "assert", "async", "await", "break", "continue", "elif", "finally", "nonlocal", "None", "True", "False"]);

/** `dashboard.endedLastHour` → `DashboardEndedLastHour`. */
const pascal = (name: string) => name.split(/[^A-Za-z0-9]+/).filter(Boolean).map((part) => part[0]!.toUpperCase() + part.slice(1)).join("");

const pythonValue = (value: unknown) => (typeof value === "boolean" ? (value ? "True" : "False") : JSON.stringify(value));
const literal = (values: unknown[]) => `Literal[${values.map(pythonValue).join(", ")}]`;
const sameValues = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((value) => b.includes(value));

class PythonModule {
  private readonly definitions: string[] = [];
  private readonly defined = new Set<string>();

  constructor(private readonly components: Record<string, JsonSchema>) {}

  /** The Python type of `schema`; objects become TypedDicts named `name` (defined before their users). */
  typeOf(schema: JsonSchema, name: string): string {
    if (schema.$ref) return this.component(schema.$ref.split("/").pop()!);
    const variants = schema.anyOf ?? schema.oneOf;
    if (variants) return this.union(variants, name);
    if (schema.enum) return NAMED_LISTS.find(([, values]) => sameValues(values, schema.enum!))?.[0] ?? literal(schema.enum);
    if (schema.const !== undefined) return literal([schema.const]);
    if (Array.isArray(schema.type)) return schema.type.map((type) => this.typeOf({ ...schema, type }, name)).join(" | ");
    switch (schema.type) {
      case "string": return "str";
      case "integer": return "int";
      case "number": return "float";
      case "boolean": return "bool";
      case "null": return "None";
      case "array": return `list[${schema.items ? this.typeOf(schema.items, `${name}Item`) : "Any"}]`;
      case "object": return this.object(schema, name);
      default: return "Any";
    }
  }

  /** A component: defined once under its own name (`WorkItem`, `leases.claim.output` → `LeasesClaimOutput`). */
  private component(id: string): string {
    const name = pascal(id);
    if (!this.defined.has(name)) {
      const type = this.typeOf(this.components[id]!, name);
      // A nullable answer (leases.claim's) keeps its name for the object: the client says `| None`.
      if (type !== name && type !== `${name} | None`) this.define(name, `${name} = ${type}`);
    }
    return name;
  }

  private union(variants: JsonSchema[], name: string): string {
    const objects = variants.filter((variant) => variant.type === "object").length;
    return [...new Set(variants.map((variant, index) => {
      // A variant of a tagged union is named by its tag (waitingOn's `stage`), else by its place.
      const tag = Object.values(variant.properties ?? {}).find((property) => property.const !== undefined)?.const;
      const variantName = objects > 1 ? `${name}${tag === undefined ? index + 1 : pascal(String(tag))}` : name;
      return this.typeOf(variant, variantName);
    }))].join(" | ");
  }

  private object(schema: JsonSchema, name: string): string {
    const properties = Object.entries(schema.properties ?? {});
    if (properties.length === 0) {
      const values = typeof schema.additionalProperties === "object" ? this.typeOf(schema.additionalProperties, `${name}Value`) : "Any";
      return `dict[str, ${values}]`;
    }
    const required = new Set(schema.required ?? []);
    const fields = properties.map(([key, property]) => ({ key, type: this.typeOf(property, `${name}${pascal(key)}`), required: required.has(key) }));
    const line = (field: { key: string; type: string }) => `    ${JSON.stringify(field.key)}: ${field.type},`;
    const optional = fields.filter((field) => !field.required);
    if (optional.length === 0 || optional.length === fields.length) {
      const total = optional.length === 0 ? "" : ", total=False";
      this.define(name, `${name} = TypedDict("${name}", {\n${fields.map(line).join("\n")}\n}${total})`);
      return name;
    }
    // Python 3.10 has no NotRequired: the required keys in a base, the optional ones in a total=False subclass.
    const bad = optional.find((field) => PYTHON_KEYWORDS.has(field.key) || !/^[A-Za-z_]\w*$/.test(field.key));
    if (bad) throw new Error(`${name}: the optional key ${bad.key} cannot be a class attribute`);
    this.define(`_${name}Required`, `_${name}Required = TypedDict("_${name}Required", {\n${fields.filter((field) => field.required).map(line).join("\n")}\n})`);
    this.define(name, `class ${name}(_${name}Required, total=False):\n${optional.map((field) => `    ${field.key}: ${field.type}`).join("\n")}`);
    return name;
  }

  define(name: string, text: string) {
    if (this.defined.has(name)) throw new Error(`two shapes are both named ${name}`);
    this.defined.add(name);
    this.definitions.push(text);
  }

  text(): string {
    return this.definitions.join("\n\n\n");
  }
}

type Operation = {
  operationId: string;
  parameters?: { name: string; content: Record<string, { schema: JsonSchema }> }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
};

/** The text of _types.py for an OpenAPI document. */
export function pythonTypes(document: ReturnType<typeof openApiDocument>): string {
  const { components, paths } = document as { components: { schemas: Record<string, JsonSchema> }; paths: Record<string, Record<string, Operation>> };
  const module = new PythonModule(components.schemas);
  const present = NAMED_LISTS.filter(([, values]) => JSON.stringify(components.schemas).includes(JSON.stringify(values)));
  for (const [name, values] of present) module.define(name, `${name} = ${literal([...values])}`);
  const reasons = (components.schemas.Error as { properties: { error: JsonSchema } }).properties.error.properties!.data!.properties!.reason!.enum!;
  module.define("REASONS", `REASONS: tuple[Reason, ...] = (${reasons.map((reason) => JSON.stringify(reason)).join(", ")})`);
  for (const id of Object.keys(components.schemas).filter((id) => id !== "Error")) module.typeOf({ $ref: `#/components/schemas/${id}` }, pascal(id));
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const name = pascal(operation.operationId);
      const input = operation.requestBody?.content["application/json"]?.schema ?? operation.parameters?.find((parameter) => parameter.name === "input")?.content["application/json"]?.schema;
      if (input) {
        const type = module.typeOf(input, `${name}Input`);
        if (type !== `${name}Input`) module.define(`${name}Input`, `${name}Input = ${type}`);
      }
    }
  }
  return [
    '"""The shapes of docs/api.md as TypedDicts, generated from the OpenAPI document: do not edit.',
    "",
    "Regenerate with `npm run generate:python` (scripts/generate-python-types.ts). Each procedure's",
    "input is `<Procedure>Input` (e.g. `LeasesClaimInput`), its answer `<Procedure>Output` where the",
    "document names one (an answer shared by several procedures is named after the first).",
    '"""',
    "",
    "from __future__ import annotations",
    "",
    "from typing import Any, Literal, TypedDict",
    "",
    "",
    module.text(),
    "",
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(PYTHON_TYPES_FILE, pythonTypes(openApiDocument()));
  process.stderr.write(`wrote ${path.relative(process.cwd(), PYTHON_TYPES_FILE)}\n`);
}
