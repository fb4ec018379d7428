import { WorkGraphError } from "../errors";
import { lifecycleLogger, logger } from "../log";
import { sqlState } from "./transaction";

/**
 * Tells "the database cannot be reached" (down, restarting, connection lost, pool exhausted
 * waiting for a connection) from defects and bad input, so callers get UNAVAILABLE (503, retry
 * later) instead of a 500, and the log says so once per state change instead of once per request.
 */

const NODE_SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
// Can't reach server, timed out, server closed the connection, pool timeout.
const PRISMA_CONNECTION_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
const ADAPTER_CONNECTION_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections"]);
// admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections (class 08: connection exceptions).
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300"]);
const CONNECTION_MESSAGES =
  /Connection terminated|Can't reach database server|Server has closed the connection|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery mode|not yet accepting connections)|terminating connection due to/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  const state = sqlState(error);
  if (state && (state.startsWith("08") || UNAVAILABLE_SQLSTATES.has(state))) return true;
  for (let current: unknown = error, depth = 0; current && depth < 8; depth++) {
    const candidate = current as { code?: unknown; message?: unknown; kind?: unknown; meta?: { driverAdapterError?: unknown }; cause?: unknown };
    if (typeof candidate.code === "string" && (NODE_SOCKET_CODES.has(candidate.code) || PRISMA_CONNECTION_CODES.has(candidate.code))) return true;
    if (typeof candidate.kind === "string" && ADAPTER_CONNECTION_KINDS.has(candidate.kind)) return true;
    if (typeof candidate.message === "string" && CONNECTION_MESSAGES.test(candidate.message)) return true;
    current = candidate.meta?.driverAdapterError ?? candidate.cause;
  }
  return false;
}

export const UNAVAILABLE_MESSAGE = "the database cannot be reached right now; retry with backoff";

export function unavailableError(): WorkGraphError {
  return new WorkGraphError("UNAVAILABLE", UNAVAILABLE_MESSAGE);
}

// Whether the last outcome logged was "down": the transitions go to the process's one log (server/log.ts).
const state = { down: false };

/** A call failed because the database is unreachable: logs "database unavailable" on the transition only. */
export function noteDatabaseDown(): void {
  if (state.down) return;
  state.down = true;
  logger().error("database unavailable: API calls answer 503 UNAVAILABLE until it is back");
}

/** A call reached the database: logs the recovery on the transition only. */
export function noteDatabaseUp(): void {
  if (!state.down) return;
  state.down = false;
  lifecycleLogger().info("database available again");
}

/** Rethrows `error`, as UNAVAILABLE when it means the database cannot be reached. */
export function classifyDatabaseError(error: unknown): never {
  if (isDatabaseUnavailable(error)) {
    noteDatabaseDown();
    throw unavailableError();
  }
  throw error;
}
