import { authenticate } from "../auth/tokens";
import type { Db } from "../db";
import { logger } from "../log";
import { renderMetrics } from "../metrics";

const refuse = (status: 401 | 403 | 503, reason: string, message: string) =>
  Response.json({ reason, message }, { status, headers: { "cache-control": "no-store" } });

/** `GET /api/metrics` (docs/api.md "Metrics"): the Prometheus scrape, for operator and admin bearer tokens only. */
export async function handleMetricsRequest(db: Db, request: Request): Promise<Response> {
  const token = request.headers.get("authorization")?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  try {
    const caller = token && token.length <= 500 ? await authenticate(db, token) : null;
    if (!caller) return refuse(401, "UNAUTHENTICATED", "missing, unknown or revoked token: send Authorization: Bearer <token>");
    if (caller.role === "agent") return refuse(403, "FORBIDDEN", "metrics are for operator or admin tokens, not agents");
    const { contentType, body } = await renderMetrics(db);
    return new Response(body, { headers: { "content-type": contentType, "cache-control": "no-store" } });
  } catch (error) {
    // The database cannot be read: a failed scrape (Prometheus' `up` goes to 0) rather than stale gauges.
    logger().error({ err: error }, "metrics scrape failed");
    return refuse(503, "UNAVAILABLE", "the database cannot be reached right now");
  }
}
