import { isDatabaseUnavailable, noteDatabaseDown, UNAVAILABLE_MESSAGE } from "../database/availability";
import { sqlState } from "../database/transaction";
import { logger } from "../log";

/**
 * The HTTP routes outside tRPC (`/api/session`, `/api/metrics`) answer refusals as JSON
 * `{ reason, message }`. These are their answers when the work fails: the API's UNAVAILABLE
 * (503, the same message tRPC sends) when the database cannot be reached, and a generic
 * INTERNAL (500) for anything else. Neither carries error text, hosts or ports; the details
 * of an INTERNAL go only to the server log, and an outage is logged once per state change
 * (server/database/availability.ts), not once per request.
 */

const noStore = { "cache-control": "no-store" };

export function unavailableResponse(message = UNAVAILABLE_MESSAGE): Response {
  return Response.json({ reason: "UNAVAILABLE", message }, { status: 503, headers: noStore });
}

export function internalErrorResponse(): Response {
  return Response.json({ reason: "INTERNAL", message: "internal error" }, { status: 500, headers: noStore });
}

/**
 * The answer for `error` thrown by a route's work: 503 UNAVAILABLE when the database cannot be
 * reached or a statement ran into the statement timeout (load, not a defect: as tRPC answers
 * both, server/trpc/init.ts), else a logged 500 INTERNAL.
 */
export function failureResponse(error: unknown, route: string): Response {
  if (isDatabaseUnavailable(error)) {
    noteDatabaseDown();
    return unavailableResponse();
  }
  if (sqlState(error) === "57014") return unavailableResponse("the database did not answer within the statement timeout; retry later");
  logger().error({ err: error, route }, "internal error");
  return internalErrorResponse();
}
