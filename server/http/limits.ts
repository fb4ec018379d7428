/** Request limits (README "Security"); read from the environment on every request so tests and operators can change them. */

function positiveInteger(raw: string | undefined, fallback: number): number {
  const value = raw === undefined || raw === "" ? fallback : Number(raw);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

/** Largest request body read, in bytes (WORK_GRAPH_MAX_BODY_BYTES, default 1 MiB). Larger: 413 TOO_LARGE. */
export const maxBodyBytes = () => positiveInteger(process.env.WORK_GRAPH_MAX_BODY_BYTES, 1024 * 1024);

/** Most calls in one `?batch=1` request (WORK_GRAPH_MAX_BATCH, default 20). More: 413 TOO_LARGE. */
export const maxBatchCalls = () => positiveInteger(process.env.WORK_GRAPH_MAX_BATCH, 20);

/**
 * Longest wait for a database connection (WORK_GRAPH_DB_CONNECT_TIMEOUT_MS, default 5 s): opening
 * one, or getting a free one from the pool. A database that accepts connections but never answers
 * (a hung server, a network black hole) then gives 503 UNAVAILABLE instead of requests that hang.
 */
export const databaseConnectTimeoutMs = () => positiveInteger(process.env.WORK_GRAPH_DB_CONNECT_TIMEOUT_MS, 5_000);

/**
 * Longest a single SQL statement of the API may run (WORK_GRAPH_STATEMENT_TIMEOUT_MS, default
 * 15 s), so one slow request cannot hold pool connections that others wait for. "0" turns it off.
 */
export function statementTimeoutMs(): number {
  if (process.env.WORK_GRAPH_STATEMENT_TIMEOUT_MS === "0") return 0;
  return positiveInteger(process.env.WORK_GRAPH_STATEMENT_TIMEOUT_MS, 15_000);
}
