// Builds the package into dist/: plain ESM JavaScript for run time (no tsx), and one bundled
// index.d.ts that carries the API's types. @work-graph/contract (a workspace package that is not
// published) is bundled into both, so the package depends on nothing outside itself.
import path from "node:path";
import { mkdir, mkdtemp, readdir, rename, rm } from "node:fs/promises";
import { build } from "rolldown";
import { dts } from "rolldown-plugin-dts";

const here = import.meta.dirname;
const repo = path.resolve(here, "../..");
const dist = path.join(here, "dist");

/** Bare specifiers (npm packages, node: builtins) stay imports; our own files and the contract are bundled. */
const external = (id) => !id.startsWith(".") && !path.isAbsolute(id) && id !== "@work-graph/contract";

/** `--js`: only the JavaScript (what the repository's tests and `npx work-graph` need); types take much longer. */
const jsOnly = process.argv.includes("--js");

const started = performance.now();
// Built beside dist/ and moved in file by file (atomic renames, stable names): a CLI or MCP
// server running from dist/ while a build happens (tests, `npm pack`) never sees half a file.
const staging = await mkdtemp(path.join(here, ".dist-"));
await build({
  input: { index: path.join(here, "src/sdk/index.ts") },
  platform: "node",
  external,
  logLevel: "warn",
  output: { dir: staging, format: "esm", entryFileNames: "[name].js" },
});
// The CLI carries its own copy of the tRPC client (tree-shaken): loading the packages' many
// modules cost more start-up time than the rest of the CLI. commander (its argument parser: one
// module, no dependencies) stays an import of the package's own dependency. The MCP server stays
// a separate chunk, loaded only by `work-graph mcp`; so do the plan parsers, loaded only by `work-graph import`.
const CLI_CHUNKS = { server: "cli-mcp.js", parse: "cli-plans.js" };
await build({
  input: { cli: path.join(here, "src/cli/main.ts") },
  platform: "node",
  external: (id) => external(id) && !id.startsWith("@trpc/"),
  logLevel: "warn",
  output: { dir: staging, format: "esm", entryFileNames: "[name].js", chunkFileNames: (chunk) => CLI_CHUNKS[chunk.name] ?? "cli-shared.js" },
});
if (!jsOnly) await build({
  input: { index: path.join(here, "src/sdk/index.ts") },
  platform: "node",
  external,
  logLevel: "warn",
  plugins: [dts({ tsconfig: path.join(repo, "tsconfig.json"), emitDtsOnly: true, eager: true, compilerOptions: { incremental: false } })],
  output: { dir: staging, format: "esm", entryFileNames: "[name].js" },
});
const built = new Set(await readdir(staging));
await mkdir(dist, { recursive: true });
for (const file of built) await rename(path.join(staging, file), path.join(dist, file));
for (const file of await readdir(dist)) if (!built.has(file) && !(jsOnly && file.endsWith(".d.ts"))) await rm(path.join(dist, file), { force: true });
await rm(staging, { recursive: true, force: true });
process.stderr.write(`@work-graph/agent built into dist/${jsOnly ? " (JavaScript only)" : ""} in ${Math.round(performance.now() - started)} ms\n`);
