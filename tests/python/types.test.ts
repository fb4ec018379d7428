import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PYTHON_TYPES_FILE, pythonTypes } from "../../scripts/generate-python-types";
import { openApiDocument } from "../../server/http/openapi";

/*
 * The Python client's types are generated from the OpenAPI document (itself made from
 * @work-graph/contract): the file on disk must be what the generator writes now. No Python needed.
 */

describe("the Python client's generated types", () => {
  it("are what the OpenAPI document gives (else: npm run generate:python)", () => {
    const onDisk = readFileSync(PYTHON_TYPES_FILE, "utf8");
    const stale = onDisk !== pythonTypes(openApiDocument());
    expect(stale, `${path.relative(process.cwd(), PYTHON_TYPES_FILE)} is stale: run \`npm run generate:python\` and commit the result`).toBe(false);
  });

  it("cover every shape docs/api.md names and the reasons, stages and kinds", () => {
    const text = readFileSync(PYTHON_TYPES_FILE, "utf8");
    for (const name of ["WorkItem", "Lease", "AttentionRequest", "Note", "Event", "Worker", "Webhook", "Delivery", "Limit", "Project", "Token", "Person"]) {
      expect(text).toMatch(new RegExp(`^${name} = TypedDict\\("${name}"`, "m"));
    }
    for (const alias of ["Stage", "LeaseOutcome", "AttentionKind", "Role", "Reason"]) expect(text).toMatch(new RegExp(`^${alias} = Literal\\[`, "m"));
    expect(text).toMatch(/^class LeasesClaimInput\(|^LeasesClaimInput = TypedDict\(/m);
  });

  it("are the ones the client uses: no hand-written shape is left in clients/python", () => {
    const sources = ["client.py", "worker.py", "types.py", "errors.py", "__init__.py"].map((file) => readFileSync(path.join(path.dirname(PYTHON_TYPES_FILE), file), "utf8"));
    for (const text of sources) {
      expect(text).not.toMatch(/class \w+\(TypedDict\)|TypedDict\(/);
      expect(text).not.toMatch(/Literal\[\s*"(decision|ready|released|agent|VALIDATION)"/);
    }
  });
});
