import { databaseConnectTimeoutMs, databasePoolSize, databaseUrl, directDatabaseUrl, preparedStatements, statementTimeoutMs } from "@/server/config";
import { createInstance, type Instance } from "@/server/instance";

// Next bundles each route and page separately: one slot for the whole process.
const holder = globalThis as unknown as { workGraphNextInstance?: Instance };

/** The instance Next's route handlers and pages use, built once from DATABASE_URL (set by scripts/start.ts or the environment). */
export function nextInstance(): Instance {
  if (!holder.workGraphNextInstance) {
    const url = databaseUrl();
    if (!url) throw new Error("DATABASE_URL is not set: start the app with `npm start`, which provides it");
    holder.workGraphNextInstance = createInstance({
      databaseUrl: url,
      poolSize: databasePoolSize(),
      connectTimeoutMs: databaseConnectTimeoutMs(),
      statementTimeoutMs: statementTimeoutMs(),
      namedStatements: preparedStatements() === "named",
      directConnectionString: directDatabaseUrl(),
    });
  }
  return holder.workGraphNextInstance;
}
