#!/usr/bin/env node
// `work-graph` CLI launcher: runs the TypeScript source (src/cli/main.ts) through tsx, so
// `npx work-graph …` works right after `npm install`, with no build step.
import { tsImport } from "tsx/esm/api";

const { main } = await tsImport("../src/cli/main.ts", import.meta.url);
process.exitCode = await main(process.argv.slice(2));
