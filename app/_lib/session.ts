import { cookies } from "next/headers";
import { sessionCaller as callerOfSession } from "@/server/auth/sessions";
import { getDb } from "@/server/db";
import { ROLES } from "@work-graph/contract";
import type { Caller } from "@/server/domain/types";
import { SESSION_COOKIE } from "@/server/trpc/init";

/** Roles that may use the dashboard: humans. Agent tokens are refused at login and here. */
export const DASHBOARD_ROLES: ReadonlySet<Caller["role"]> = new Set(ROLES.filter((role) => role !== "agent"));

/** The operator or admin behind the request's session cookie, or null (no cookie, unknown or expired session, revoked token, or an agent token). */
export async function sessionCaller(): Promise<Caller | null> {
  const sessionId = (await cookies()).get(SESSION_COOKIE)?.value;
  if (!sessionId) return null;
  const caller = await callerOfSession(getDb(), sessionId);
  return caller && DASHBOARD_ROLES.has(caller.role) ? caller : null;
}
