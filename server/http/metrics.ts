import { authenticate } from "../auth/tokens";
import { noteDatabaseUp } from "../database/availability";
import type { Db } from "../db";
import { renderMetrics } from "../metrics";
import { failureResponse } from "./unavailable";

const refuse = (status: 401 | 403, reason: string, message: string) =>
  Response.json({ reason, message }, { status, headers: { "cache-control": "no-store" } });

/** `GET /api/metrics` (docs/api.md "Metrics"): the Prometheus scrape, for operator and admin bearer tokens only. */
export async function handleMetricsRequest(db: Db, request: Request): Promise<Response> {
  const token = request.headers.get("authorization")?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  try {
    const asked = token !== undefined && token.length <= 500;
    const caller = asked ? await authenticate(db, token) : null;
    if (asked) noteDatabaseUp();
    if (!caller) return refuse(401, "UNAUTHENTICATED", "missing, unknown or revoked token: send Authorization: Bearer <token>");
    if (caller.role === "agent") return refuse(403, "FORBIDDEN", "metrics are for operator or admin tokens, not agents");
    const { contentType, body } = await renderMetrics(db);
    return new Response(body, { headers: { "content-type": contentType, "cache-control": "no-store" } });
  } catch (error) {
    // The database cannot be read: a failed scrape (Prometheus' `up` goes to 0) rather than stale
    // gauges; 503 UNAVAILABLE as the API answers it (logged once per outage), anything else a logged 500.
    return failureResponse(error, "/api/metrics");
  }
}
