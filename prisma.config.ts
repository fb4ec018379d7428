import { fileURLToPath } from "node:url";
import { defineConfig } from "prisma/config";

// Prisma 7 would download a native schema engine on first use (no internet here): every
// prisma command runs our Node stand-in instead, which drives Prisma's WebAssembly build of
// the same engine. See prisma/engine/schema-engine.mjs. The CLI resolves this path against
// the current directory, so it must be absolute. `??=` leaves an explicit override alone.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= fileURLToPath(
  new URL("./prisma/engine/schema-engine.mjs", import.meta.url),
);

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: {
    // `prisma generate` (the postinstall) needs no database; migrate commands use DATABASE_URL.
    url: process.env.DATABASE_URL ?? "postgresql://postgres@localhost:5432/work_graph",
  },
});
