import { cookies } from "next/headers";
import { authenticate } from "@/server/auth/tokens";
import { getDb } from "@/server/db";
import type { Caller } from "@/server/domain/types";
import { SESSION_COOKIE } from "@/server/trpc/init";

/** Roles that may use the dashboard: humans. Agent tokens are refused at login and here. */
export const DASHBOARD_ROLES: ReadonlySet<Caller["role"]> = new Set(["operator", "admin"]);

/** The operator or admin behind the request's session cookie, or null (no cookie, unknown, revoked, or an agent token). */
export async function sessionCaller(): Promise<Caller | null> {
  const token = (await cookies()).get(SESSION_COOKIE)?.value;
  if (!token) return null;
  const caller = await authenticate(getDb(), token);
  return caller && DASHBOARD_ROLES.has(caller.role) ? caller : null;
}
