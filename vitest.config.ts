import { randomBytes } from "node:crypto";
import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["tests/**/*.test.ts"],
    exclude: ["tests/browser/**", "node_modules/**"],
    globalSetup: ["tests/support/global-setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file gets its own database cloned from a migrated template, so files run in parallel.
    fileParallelism: true,
    // Files spend most of their time waiting on PostgreSQL and child processes, not on CPU:
    // three at once on 2 cores (Vitest's default there is one) cuts the run about in half.
    maxWorkers: 3,
    // Settings a test changes with vi.stubEnv are put back before the next test.
    unstubEnvs: true,
    // expect.poll waits on state (a row, a counter, the database clock), never a fixed sleep;
    // the default second is too short on a machine busy with other test files.
    expect: { poll: { timeout: 15_000, interval: 20 } },
    env: {
      // The request log (one line per API call) would drown the test output; tests that check it raise the level.
      WORK_GRAPH_LOG_LEVEL: process.env.WORK_GRAPH_LOG_LEVEL ?? "warn",
      // Webhook secrets are encrypted with a per-run key (never a key file in the repository's data dir).
      WORK_GRAPH_SECRET_KEY: randomBytes(32).toString("hex"),
    },
  },
});
