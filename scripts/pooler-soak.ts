/**
 * `npx tsx scripts/pooler-soak.ts [seconds] [--dashboard]` (default 180 s): issue 26's run by
 * hand. Debian's PostgreSQL 15 and PgBouncer 1.18 in transaction mode (tests/databases/support.ts),
 * the app as a non-superuser role owning its database, two instances of scripts/start.ts (what
 * `npm start` runs) with DATABASE_URL through PgBouncer and WORK_GRAPH_DIRECT_DATABASE_URL direct.
 * Without --dashboard both are `--api-only`; with it, instance A is the full app (it builds Next
 * first when .next is missing or stale — that start may take minutes — and serves the dashboard),
 * started and ready before B (still --api-only) starts.
 *
 * The load: an operator creates items, 16 agents claim with `waitSeconds` through both instances,
 * note and release, 5 % of their leases are abandoned and released again (stale) after they
 * expired, an `events.stream` reader reconnects every 10 s, tRPC dashboard reads twice a second.
 * With --dashboard also a person at the dashboard on A: logs in as the browser does (POST
 * /api/session with CSRF_HEADER and the admin token, keeps the wg_session cookie), once loads the
 * scripts the overview page references, and every 2 s loads every dashboard page (app/(dashboard)/,
 * an item's page included) and makes the shell's batched tRPC call with the cookie; any answer but
 * 200 (a redirect to /login included) is an error, recorded with its path and status.
 *
 * Prints the counts and every server log line at warn or worse from both instances (there should
 * be none); exits 1 when there were errors, page errors, warn-or-worse lines, or stale releases
 * accepted. Loopback only; bounded in time.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { createWorkGraphClient } from "../packages/agent/src/sdk/client";
import { toWorkGraphError } from "../packages/agent/src/sdk/errors";
import { CSRF_HEADER } from "@work-graph/contract";
import { SESSION_COOKIE } from "../server/trpc/init";
import { sleep, startServer, stopServer, tempDataDir, waitReady } from "./server-process";
import { startPgBouncer, startPostgres15 } from "../tests/databases/support";

const args = process.argv.slice(2);
const unknown = args.filter((arg) => arg.startsWith("-") && arg !== "--dashboard");
const positional = args.filter((arg) => !arg.startsWith("-"));
const seconds = Number(positional[0] ?? 180);
if (unknown.length > 0 || positional.length > 1 || !(seconds > 0)) {
  console.error("usage: npx tsx scripts/pooler-soak.ts [seconds] [--dashboard]");
  process.exit(2);
}
const withDashboard = args.includes("--dashboard");
/** The pages under app/(dashboard)/ (an item's page, /items/<id>, is added once an item exists). */
const DASHBOARD_PAGES = ["/", "/attention", "/items", "/leases", "/workers", "/activity", "/limits", "/webhooks", "/people", "/unroutable", "/import", "/account"];
const AGENTS = 16;
const postgres = await startPostgres15();
const admin = new pg.Client({ connectionString: postgres.url() });
await admin.connect();
await admin.query("CREATE ROLE wg_app LOGIN");
await admin.query("CREATE DATABASE wg OWNER wg_app");
await admin.end();
const bouncer = await startPgBouncer(postgres, { roles: ["wg_app"], poolSize: 10 });
const env = { DATABASE_URL: bouncer.url("wg", "wg_app"), WORK_GRAPH_DIRECT_DATABASE_URL: postgres.url("wg", "wg_app"), WORK_GRAPH_LOG_LEVEL: "info" };
const adminToken = `wgx_soak_${randomBytes(18).toString("base64url")}`;
const data = tempDataDir();
// With the dashboard, A may build Next first: waitReady then allows for it (server-process.ts).
if (withDashboard) console.log("starting instance A with the dashboard (builds Next first when .next is missing or stale)…");
const a = await startServer({ dataDir: data.dir, adminToken, env, dashboard: withDashboard });
await waitReady(a);
const b = await startServer({ dataDir: data.dir, adminToken, env });
await waitReady(b);
const servers = [a, b];
console.log(`servers ${a.url}${withDashboard ? " (dashboard)" : ""} ${b.url} via PgBouncer :${bouncer.port} -> PostgreSQL 15 :${postgres.port}`);
const client = (url: string, token: string) => createWorkGraphClient({ url, token, retry: { attempts: 3, baseDelayMs: 100, maxDelayMs: 400 }, timeoutMs: 30_000 });
const op = client(a.url, adminToken);
const tokens = await Promise.all(Array.from({ length: AGENTS }, (_, i) => op.tokens.create.mutate({ role: "agent", workerId: `soak-${i}`, label: "soak" })));
const counts = { created: 0, claims: 0, emptyWaits: 0, releases: 0, crashes: 0, staleRefused: 0, staleAccepted: 0, errors: 0, ownLeaseLost: 0, streamEvents: 0, logins: 0, pageLoads: 0, pageErrors: 0, assetLoads: 0, dashboardRpc: 0 };
const errors: string[] = [];
/** Non-200 dashboard answers by "path status" (status "error: …" when there was no answer). */
const pageErrors: Record<string, number> = {};
const end = Date.now() + seconds * 1000;
let someItemId: string | undefined;
const creator = (async () => {
  for (let i = 0; Date.now() < end; i++) {
    try {
      const created = await op.workItems.create.mutate({ title: `soak ${i}` });
      someItemId ??= created.id;
      counts.created++;
    } catch (e) { counts.errors++; errors.push(`create: ${String(e)}`); }
    await sleep(40);
  }
})();
const stream = (async () => {
  const token = (await op.tokens.create.mutate({ role: "operator", label: "soak stream" })).token;
  let last = "0";
  while (Date.now() < end) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 10_000);
    try {
      const response = await fetch(`${b.url}/api/trpc/events.stream?input=${encodeURIComponent(JSON.stringify({ after: Number(last) }))}`, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" }, signal: abort.signal });
      const reader = response.body!.getReader();
      let buffer = "";
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        buffer += new TextDecoder().decode(chunk.value);
        for (const id of buffer.matchAll(/^id: ?(\d+)$/gm)) { const n = id[1]!; if (Number(n) > Number(last)) { counts.streamEvents++; last = n; } }
        buffer = buffer.slice(buffer.lastIndexOf("\n\n") + 2);
      }
    } catch { /* reconnect every 10 s on purpose */ } finally { clearTimeout(timer); }
  }
})();
const agent = async (i: number) => {
  const clients = servers.map((s) => client(s.url, tokens[i]!.token));
  for (let turn = i; Date.now() < end; turn++) {
    const c = clients[turn % 2]!;
    try {
      const got = await c.leases.claim.mutate({ waitSeconds: 3, durationSeconds: 10 });
      if (!got) { counts.emptyWaits++; continue; }
      counts.claims++;
      if (Math.random() < 0.05) {
        counts.crashes++;
        const stale = got.lease;
        setTimeout(async () => {
          try { await c.leases.release.mutate({ leaseId: stale.id, epoch: stale.epoch, evidence: "stale" }); counts.staleAccepted++; }
          catch (e) { if (toWorkGraphError(e).reason === "LEASE_NOT_CURRENT") counts.staleRefused++; else { counts.errors++; errors.push(`stale: ${String(e)}`); } }
        }, 12_000);
        continue;
      }
      await sleep(20 + Math.random() * 200);
      await c.leases.note.mutate({ leaseId: got.lease.id, epoch: got.lease.epoch, content: "working" });
      await c.leases.release.mutate({ leaseId: got.lease.id, epoch: got.lease.epoch, evidence: "done" });
      counts.releases++;
    } catch (e) {
      const reason = toWorkGraphError(e).reason;
      if (reason === "LEASE_NOT_CURRENT") counts.ownLeaseLost++;
      else { counts.errors++; errors.push(`agent: ${reason} ${String(e)}`); }
    }
  }
};
const reads = (async () => {
  while (Date.now() < end) {
    try { await op.dashboard.summary.query({}); await op.workItems.list.query({}); await op.leases.active.query({}); } catch (e) { counts.errors++; errors.push(`reads: ${String(e).slice(0, 200)}`); }
    await sleep(500);
  }
})();
/** A person at the dashboard on A, as the browser does it: the session cookie, CSRF_HEADER on its own calls. */
const person = (async () => {
  if (!withDashboard) return;
  const pageError = (where: string, status: string) => {
    counts.pageErrors++;
    pageErrors[`${where} ${status}`] = (pageErrors[`${where} ${status}`] ?? 0) + 1;
  };
  /** GET on A; null (recorded as a page error) when there was no answer at all. */
  const get = async (where: string, headers: Record<string, string>) => {
    try {
      return await fetch(`${a.url}${where}`, { headers, redirect: "manual", signal: AbortSignal.timeout(30_000) });
    } catch (e) {
      pageError(where, `error: ${String(e).slice(0, 120)}`);
      return null;
    }
  };
  let cookie: string | undefined;
  let assetsChecked = false;
  while (Date.now() < end) {
    const round = Date.now();
    if (!cookie) {
      try {
        const login = await fetch(`${a.url}/api/session`, {
          method: "POST",
          headers: { "content-type": "application/json", [CSRF_HEADER]: "1" },
          body: JSON.stringify({ token: adminToken }),
          signal: AbortSignal.timeout(30_000),
        });
        const sessionId = login.headers.get("set-cookie")?.match(new RegExp(`${SESSION_COOKIE}=([^;]+)`))?.[1];
        await login.arrayBuffer();
        if (login.status === 200 && sessionId) {
          cookie = `${SESSION_COOKIE}=${sessionId}`;
          counts.logins++;
        } else pageError("POST /api/session", String(login.status));
      } catch (e) {
        pageError("POST /api/session", `error: ${String(e).slice(0, 120)}`);
      }
    }
    const session = cookie;
    if (session) {
      const pages = someItemId ? [...DASHBOARD_PAGES, `/items/${encodeURIComponent(someItemId)}`] : DASHBOARD_PAGES;
      for (const page of pages) {
        const response = await get(page, { cookie: session, accept: "text/html" });
        if (!response) continue;
        const html = await response.text().catch(() => "");
        if (response.status !== 200) {
          pageError(page, String(response.status));
          // A redirect to /login: the session is gone; log in again next round.
          if (response.headers.get("location")?.includes("/login")) cookie = undefined;
          continue;
        }
        // A redirect that Next could only stream (the status already sent): a meta refresh in a 200.
        if (html.includes("__next-page-redirect")) {
          pageError(page, "200 with a redirect");
          cookie = undefined;
          continue;
        }
        counts.pageLoads++;
        if (!assetsChecked && page === "/") {
          assetsChecked = true;
          const scripts = [...new Set([...html.matchAll(/src="(\/_next\/static\/[^"]+)"/g)].map((m) => m[1]!))];
          if (scripts.length === 0) pageError("/ (no /_next/static scripts in the page)", "200");
          for (const script of scripts) {
            const asset = await get(script, {});
            if (!asset) continue;
            await asset.arrayBuffer().catch(() => {});
            if (asset.status === 200) counts.assetLoads++;
            else pageError(script, String(asset.status));
          }
        }
      }
      // The shell's and pages' batched reads (app/_components/trpc.tsx: httpBatchLink, cookie + CSRF_HEADER).
      if (cookie) {
        const procedures = ["dashboard.summary", "leases.active", "workItems.list", "workers.list"];
        const input = Object.fromEntries(procedures.map((_, i) => [String(i), {}]));
        const where = `/api/trpc/${procedures.join(",")}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`;
        const response = await get(where, { cookie: session, [CSRF_HEADER]: "1" });
        if (response) {
          await response.arrayBuffer().catch(() => {});
          if (response.status === 200) counts.dashboardRpc++;
          else pageError(`/api/trpc/${procedures.join(",")}`, String(response.status));
        }
      }
    }
    await sleep(Math.max(0, 2_000 - (Date.now() - round)));
  }
})();
await Promise.all([creator, stream, reads, person, ...Array.from({ length: AGENTS }, (_, i) => agent(i))]);
await sleep(5_000);
for (const s of servers) await stopServer(s);
const named = [{ name: "A", server: a }, { name: "B", server: b }];
const lines = named.flatMap(({ name, server }) => server.output().split("\n").filter(Boolean).map((line) => ({ name, line })));
// Every line start.ts writes is a pino JSON line: anything else (a stray stack trace, Next's own text) counts as bad too.
const bad = lines.filter(({ line }) => { try { return JSON.parse(line).level >= 40; } catch { return true; } });
console.log(JSON.stringify({ seconds, dashboard: withDashboard, counts, pageErrors, logLines: lines.length, warnOrWorse: bad.length }, null, 1));
const SHOWN = 200;
for (const { name, line } of bad.slice(0, SHOWN)) console.log(`LOG ${name}`, line.slice(0, 600));
if (bad.length > SHOWN) console.log(`LOG … ${bad.length - SHOWN} more warn-or-worse lines`);
for (const e of errors.slice(0, 20)) console.log("ERR", e.slice(0, 400));
if (errors.length > 20) console.log(`ERR … ${errors.length - 20} more`);
const failures = [
  counts.errors > 0 && `${counts.errors} errors`,
  counts.pageErrors > 0 && `${counts.pageErrors} dashboard answers other than 200`,
  withDashboard && counts.pageLoads === 0 && "no dashboard page loaded",
  bad.length > 0 && `${bad.length} server log lines at warn or worse`,
  counts.staleAccepted > 0 && `${counts.staleAccepted} stale releases accepted`,
].filter(Boolean);
console.log(failures.length === 0 ? "PASS" : `FAIL: ${failures.join("; ")}`);
await bouncer.stop();
await postgres.stop();
data.remove();
process.exit(failures.length === 0 ? 0 : 1);
