#!/usr/bin/env node
// `work-graph` CLI launcher: runs the compiled JavaScript in dist/ (built by `npm install` in the
// repository, and shipped in the package), so a call costs a plain Node start.
let cli;
try {
  cli = await import("../dist/cli.js");
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist/cli.js")) throw error;
  process.stderr.write("work-graph: not built yet - run `npm run build -w @work-graph/agent` (npm install does it)\n");
  process.exit(1);
}
process.exitCode = await cli.main(process.argv.slice(2));
