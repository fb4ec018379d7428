import { headers } from "next/headers";
import type { Caller } from "@/server/domain/types";
import { PAGE_CONTEXT_HEADER, readPageContext, type PageContext } from "@/server/http/page-context";

/** What the Node server resolved for this page request (server/http/page-context.ts). */
export async function pageContext(): Promise<PageContext> {
  return readPageContext((await headers()).get(PAGE_CONTEXT_HEADER));
}

/** The operator or admin behind the request's session cookie, or null (no cookie, unknown or expired session, revoked token, or an agent token). */
export async function sessionCaller(): Promise<Caller | null> {
  return (await pageContext()).caller;
}
