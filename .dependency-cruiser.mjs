// Layering and no-cycle rules of the code base, checked by tests/architecture/layers.test.ts
// (dependency-cruiser's API) and by hand with `npx depcruise server app packages/agent/src packages/contract/src scripts proxy.ts`.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const root = import.meta.dirname;

/** The dashboard's browser code: the files under app/ that start with "use client". */
function browserFiles() {
  return readdirSync(path.join(root, "app"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .filter((file) => readFileSync(path.join(root, file), "utf8").startsWith('"use client"'));
}

const escape = (file) => file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycle, type-only imports included: every module can be understood (and loaded) before the ones that use it.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "queries-never-import-operations",
      comment: "Reads (server/queries) never reach into writes (server/operations).",
      severity: "error",
      from: { path: "^server/queries/" },
      to: { path: "^server/operations/" },
    },
    {
      name: "core-never-imports-integrations",
      comment: "The lease core never reaches into an integration (server/integrations/<name>): integrations consume its events outbox and its generic hooks.",
      severity: "error",
      from: { path: "^server/(operations|domain|sql|queries|realtime|database)/|^server/db\\.ts$" },
      to: { path: "^server/integrations/" },
    },
    {
      name: "routers-stand-alone",
      comment: "Each tRPC router stands alone: only server/trpc/root.ts puts them together.",
      severity: "error",
      from: { path: "^server/trpc/routers/" },
      to: { path: ["^server/trpc/routers/", "^server/trpc/root\\.ts$"] },
    },
    {
      name: "contract-imports-nothing",
      comment: "packages/contract imports none of the code base (only zod, and tRPC's types): the SDK and browser code take it without any server runtime.",
      severity: "error",
      from: { path: "^packages/contract/" },
      to: { pathNot: ["^packages/contract/", "(^|/)node_modules/"] },
    },
    {
      name: "agent-package-no-server-runtime",
      comment: "The SDK, CLI and MCP server use no server or dashboard code: the API's shapes, names and router type come from packages/contract.",
      severity: "error",
      from: { path: "^packages/agent/src/" },
      to: { path: "^(server|app)/" },
    },
    {
      name: "browser-code-no-server-runtime",
      comment: "The dashboard's browser code (\"use client\") imports server code only as types; the contract is packages/contract.",
      severity: "error",
      from: { path: browserFiles().map((file) => `^${escape(file)}$`) },
      to: { path: "^server/", dependencyTypesNot: ["type-only"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["(^|/)generated/", "(^|/)dist/", "^\\.next/", "node_modules"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
  },
};
