"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect, useState, type ReactNode } from "react";
import { observeServerClock, useServerNow } from "./clock";
import { CSRF_HEADER } from "@work-graph/contract";
import { clockTime } from "./format";
import { useTRPC } from "./trpc";
import { ADMIN_NAV, OPERATOR_NAV } from "./admin-nav";
import { useProjectHref, useProjectId } from "./project";
import { ProjectSwitcher } from "./project-switcher";

const NAV = [
  { href: "/", label: "Overview" },
  { href: "/items", label: "Items" },
  { href: "/leases", label: "Leases" },
  { href: "/workers", label: "Workers" },
  { href: "/attention", label: "Attention" },
  { href: "/activity", label: "Activity" },
  { href: "/limits", label: "Limits" },
] as const;

function isCurrent(pathname: string, href: string) {
  return href === "/" ? pathname === "/" : pathname === href || pathname.startsWith(`${href}/`);
}

/** dashboard.summary (of the chosen project), shared by the header and the pages; feeds the database-clock offset. */
export function useSummary() {
  const trpc = useTRPC();
  const query = useQuery(trpc.dashboard.summary.queryOptions({ projectId: useProjectId() }));
  const { data, dataUpdatedAt } = query;
  useEffect(() => {
    if (data) observeServerClock(data.now, dataUpdatedAt);
  }, [data, dataUpdatedAt]);
  return query;
}

function DatabaseStatus() {
  const summary = useSummary();
  const now = useServerNow();
  const ok = summary.isSuccess && !summary.isError;
  return (
    <p className={`db-status ${ok ? "db-ok" : summary.isError ? "db-down" : ""}`} data-testid="db-status">
      <span className="dot" aria-hidden="true" />
      {summary.isError ? (
        <span>database unreachable</span>
      ) : (
        <span>
          database {ok ? "ok" : "…"} · server time{" "}
          <time dateTime={now === null ? undefined : new Date(now).toISOString()}>{now === null || !ok ? "…" : clockTime(now)}</time>
        </span>
      )}
    </p>
  );
}

function LogoutButton() {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className="button-quiet"
      disabled={busy}
      onClick={async () => {
        setBusy(true);
        const response = await fetch("/api/session", { method: "DELETE", headers: { [CSRF_HEADER]: "1" } }).catch(() => null);
        const body = (await response?.json().catch(() => null)) as { redirect?: string } | null;
        window.location.assign(body?.redirect ?? "/login");
      }}
    >
      Log out
    </button>
  );
}

export function Shell({ actor, role, personName, children }: { actor: string; role: string; personName: string | null; children: ReactNode }) {
  const pathname = usePathname();
  const summary = useSummary();
  const projectHref = useProjectHref();
  const open = summary.data?.openAttention;
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar-inner">
          <Link href={projectHref("/")} className="brand">
            Work Graph
          </Link>
          <nav aria-label="Main">
            <ul>
              {[...NAV, ...(role === "admin" || role === "operator" ? OPERATOR_NAV : []), ...(role === "admin" ? ADMIN_NAV : [])].map(({ href, label }) => (
                <li key={href}>
                  <Link href={projectHref(href)} aria-current={isCurrent(pathname, href) ? "page" : undefined}>
                    {label}
                    {href === "/attention" && open !== undefined ? (
                      <span className={`count ${open > 0 ? "count-alert" : ""}`} data-testid="attention-count">
                        {open}
                        <span className="visually-hidden"> open</span>
                      </span>
                    ) : null}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          <div className="topbar-end">
            <ProjectSwitcher />
            <DatabaseStatus />
            {personName ? (
              <Link href="/account" className="who" title={`signed in as ${actor} (${role}): your CLI tokens`}>
                <bdi>{personName}</bdi>
              </Link>
            ) : (
              <span className="who" title={`signed in as ${actor} (${role})`}>
                <bdi>{actor}</bdi>
              </span>
            )}
            <LogoutButton />
          </div>
        </div>
      </header>
      <main id="main" className="page" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
