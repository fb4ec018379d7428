import path from "node:path";
import { defineConfig } from "vitest/config";

const root = path.resolve(import.meta.dirname, "../..");

/**
 * Browser tests: run by scripts/browser-tests.mjs, which starts the real server first and
 * passes WG_BASE_URL, WG_ADMIN_TOKEN and CHROMIUM_PATH. One file at a time (one server, 2 cores).
 */
export default defineConfig({
  root,
  resolve: { alias: { "@": root } },
  test: {
    include: ["tests/browser/**/*.test.ts"],
    pool: "forks",
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 60_000,
  },
});
