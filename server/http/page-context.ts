import type { IncomingMessage } from "node:http";
import { adminContacts } from "../auth/people";
import { DASHBOARD_ROLES, sessionCaller } from "../auth/sessions";
import type { Caller } from "../domain/types";
import type { Instance } from "../instance";
import { cookieValue, SESSION_COOKIE } from "../trpc/init";

/**
 * What the dashboard's server components need of the instance, resolved by the Node server
 * before it hands a page request to Next (scripts/start.ts) and passed in this header: Next's
 * bundles never reach the instance themselves. Trusted only because the server always removes
 * whatever a client sent under this name first.
 */
export const PAGE_CONTEXT_HEADER = "x-work-graph-page-context";

export interface PageContext {
  /** The operator or admin behind the session cookie (null: none, or an agent token's session). */
  caller: Caller | null;
  /** Admins a refused person can ask (only on /login/refused). */
  adminContacts: string[];
}

/** The value when the session could not be resolved (the database is down). */
const UNRESOLVED = "unresolved";

/** Requests for Next's build output need no context (and no database query). */
const needsContext = (pathname: string) => !pathname.startsWith("/_next/");

/** Drops any client-sent PAGE_CONTEXT_HEADER, then sets it from the request's session cookie. */
export async function attachPageContext(instance: Instance, req: IncomingMessage, pathname: string): Promise<void> {
  delete req.headers[PAGE_CONTEXT_HEADER];
  for (let i = req.rawHeaders.length - 2; i >= 0; i -= 2) {
    if (req.rawHeaders[i]!.toLowerCase() === PAGE_CONTEXT_HEADER) req.rawHeaders.splice(i, 2);
  }
  if (!needsContext(pathname)) return;
  let value = UNRESOLVED;
  try {
    const sessionId = cookieValue(req.headers.cookie ?? null, SESSION_COOKIE);
    const caller = sessionId ? await sessionCaller(instance.db, sessionId) : null;
    const context: PageContext = {
      caller: caller && DASHBOARD_ROLES.has(caller.role) ? caller : null,
      adminContacts: pathname === "/login/refused" ? await adminContacts(instance.db) : [],
    };
    // base64url: names and emails need not be the ASCII a header value must be.
    value = Buffer.from(JSON.stringify(context)).toString("base64url");
  } catch (error) {
    // The page fails as it did when it read the database itself: Next's error page.
    instance.log.error({ err: error }, "resolving the dashboard session failed");
  }
  req.headers[PAGE_CONTEXT_HEADER] = value;
  req.rawHeaders.push(PAGE_CONTEXT_HEADER, value);
}

/** The context attachPageContext set (Next's `headers()` gives the value). */
export function readPageContext(value: string | null): PageContext {
  if (value === null) throw new Error(`no ${PAGE_CONTEXT_HEADER}: the dashboard is served by \`npm start\` (or \`npm run dev\`), not by Next alone`);
  if (value === UNRESOLVED) throw new Error("the dashboard session could not be resolved (see the server log)");
  return JSON.parse(Buffer.from(value, "base64url").toString("utf8")) as PageContext;
}
