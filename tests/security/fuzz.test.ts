import fc from "fast-check";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { call, databaseDigest, DOCUMENTED_PROCEDURES, DOCUMENTED_REASONS, fields, INTERNALS, procedures, type Reply } from "./support";

/*
 * Issue 10, "Done when": generated bad input against the real HTTP handler, for every
 * procedure the router serves (all of docs/api.md v1 and whatever v2 procedures exist):
 * wrong types, missing and extra fields, NUL, lone surrogates, huge strings and arrays, deep
 * nesting, malformed bodies. Nothing may answer 5xx, every error carries a reason from
 * docs/api.md and no internals, and the database is byte-for-byte unchanged afterwards.
 */

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
let admin: string;
let inspector: pg.Client;
let before: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer(database.instance);
  const operator = await callerAs(database.instance, "operator");
  admin = (await callerAs(database.instance, "admin")).token;
  // Something for the reads to find.
  await operator.api.workItems.create({ id: "fuzz-parent", title: "parent" });
  await operator.api.workItems.create({ id: "fuzz-child", title: "child", parentId: "fuzz-parent" });
  inspector = await database.connect();
  before = await databaseDigest(inspector);
});
afterAll(async () => {
  await server.close();
  await database.close();
});

const nest = (depth: number): unknown => {
  let value: unknown = "x";
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
};

/** Values that are wrong somewhere: the generators below keep only those a schema refuses. */
function badValue(big: boolean) {
  const maxString = big ? 1_200_000 : 3_000;
  return fc.oneof(
    fc.string(),
    fc.string({ unit: "binary", maxLength: 20 }),
    fc.tuple(fc.string({ maxLength: 10 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 10 })).map(([a, unit, b]) => a + String.fromCharCode(unit) + b),
    fc.string({ maxLength: 10 }).map((s) => `${s}\u0000${s}`),
    fc.integer({ min: 1, max: maxString }).map((n) => "x".repeat(n)),
    fc.integer({ min: 90, max: big ? 20_000 : 300 }).map((n) => Array.from({ length: n }, () => "a")),
    fc.integer({ min: 2, max: big ? 1_000 : 200 }).map(nest),
    fc.integer(),
    fc.double(),
    fc.constantFrom(-1, 0, 2 ** 31, 2 ** 53, 1.5, true, false, null, "", " ", "\t\n", {}, [], "0", "true"),
    fc.jsonValue({ maxDepth: 3 }),
  );
}

function expectSafeReply(reply: Reply, where: string) {
  expect(reply.status, `${where}: ${reply.text.slice(0, 500)}`).toBeLessThan(500);
  expect(reply.body, `${where}: not JSON: ${reply.text.slice(0, 200)}`).toBeDefined();
  if (reply.status >= 400) {
    expect(DOCUMENTED_REASONS, where).toContain(reply.body.error.data.reason);
    expect(reply.body.error.message, where).not.toMatch(INTERNALS);
    expect(reply.body.error.data.stack, where).toBeUndefined();
  }
}

const URL_BUDGET = 12_000; // Node refuses request lines over 16 KiB before any application code runs.

describe("fuzzing every procedure with bad input", () => {
  // events.stream (a subscription) answers 200 and reports refusals inside the stream:
  // hardening.test.ts drives its inputs through subscriptionError.
  const all = procedures().filter((procedure): procedure is typeof procedure & { type: "query" | "mutation" } => procedure.type !== "subscription");

  it("drives every procedure of docs/api.md", () => {
    expect(DOCUMENTED_PROCEDURES.length).toBeGreaterThan(25);
    expect(all.map((procedure) => procedure.path)).toEqual(expect.arrayContaining(DOCUMENTED_PROCEDURES));
  });

  for (const procedure of all) {
    it(`${procedure.path}: no 5xx, documented reasons, no internals`, async () => {
      const schema = procedure.input as z.ZodType | undefined;
      const big = procedure.type === "mutation";
      const fieldList = fields(schema);
      const corruptField =
        fieldList.length === 0
          ? fc.constant(undefined)
          : fc
              .tuple(fc.constantFrom(...fieldList), badValue(big), fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }))
              .map(([field, value, extra]) => {
                let input: unknown = value;
                for (let i = field.path.length - 1; i >= 0; i--) input = typeof field.path[i] === "number" ? [input] : { [field.path[i]!]: input };
                return typeof input === "object" && input !== null && !Array.isArray(input) ? { ...extra, ...input } : input;
              });
      const arbitrary = fc.oneof(corruptField, badValue(big));
      await fc.assert(
        fc.asyncProperty(arbitrary, async (input) => {
          // Only input the schema refuses: the property is about bad input, and it must change nothing.
          if (schema) fc.pre(!schema.safeParse(input).success);
          else fc.pre(procedure.type === "query");
          if (procedure.type === "query") fc.pre(encodeURIComponent(JSON.stringify(input) ?? "").length < URL_BUDGET);
          const reply = await call(server.url, procedure, input, { authorization: `Bearer ${admin}` });
          expectSafeReply(reply, `${procedure.path} ${JSON.stringify(input)?.slice(0, 200)}`);
          if (schema) expect(reply.status, procedure.path).toBeGreaterThanOrEqual(400);
        }),
        { numRuns: 20, endOnFailure: true },
      );
    });
  }

  it("malformed and hostile bodies for every mutation", async () => {
    const bodies = ["", "{", "nul", "\u0000", '{"title":"\\u0000"}', "[]", "null", "1e999", '"' + "x".repeat(100) + '"', "[".repeat(100_000), '{"a":'.repeat(50_000)];
    for (const procedure of all.filter((p) => p.type === "mutation")) {
      for (const body of bodies) {
        const reply = await call(server.url, procedure, undefined, { authorization: `Bearer ${admin}` }, body);
        expectSafeReply(reply, `${procedure.path} body ${JSON.stringify(body.slice(0, 30))}`);
        expect(reply.status).toBeGreaterThanOrEqual(400);
      }
    }
  });

  it("left the database unchanged", async () => {
    expect(await databaseDigest(inspector)).toEqual(before);
  });
});
