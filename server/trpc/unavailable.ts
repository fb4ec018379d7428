import { TRPCError } from "@trpc/server";
import { isDatabaseUnavailable, noteDatabaseDown, unavailableError } from "../database/availability";

/** `error` as a 503 UNAVAILABLE tRPC error when it means the database cannot be reached; else `error` itself. */
export function asUnavailable(error: unknown): unknown {
  if (!isDatabaseUnavailable(error)) return error;
  noteDatabaseDown();
  const refusal = unavailableError();
  return new TRPCError({ code: "SERVICE_UNAVAILABLE", message: refusal.message, cause: refusal });
}
