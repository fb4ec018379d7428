/**
 * `npx tsx scripts/pooler-soak.ts [seconds]` (default 180): issue 26's run by hand. Debian's
 * PostgreSQL 15 and PgBouncer 1.18 in transaction mode (tests/databases/support.ts), the app as
 * a non-superuser role owning its database, two `npm start -- --api-only` instances with
 * DATABASE_URL through PgBouncer and WORK_GRAPH_DIRECT_DATABASE_URL direct; an operator creates
 * items, 16 agents claim with `waitSeconds` through both instances, note and release, 5 % of
 * their leases are abandoned and released again (stale) after they expired, an `events.stream`
 * reader reconnects every 10 s, dashboard reads twice a second. Prints the counts and every
 * server log line at warn or worse (there should be none). Loopback only; bounded in time.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { createWorkGraphClient } from "../packages/agent/src/sdk/client";
import { toWorkGraphError } from "../packages/agent/src/sdk/errors";
import { sleep, startServer, stopServer, tempDataDir, waitReady } from "./server-process";
import { startPgBouncer, startPostgres15 } from "../tests/databases/support";

const seconds = Number(process.argv[2] ?? 180);
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
const a = await startServer({ dataDir: data.dir, adminToken, env });
await waitReady(a);
const b = await startServer({ dataDir: data.dir, adminToken, env });
await waitReady(b);
const servers = [a, b];
console.log(`servers ${a.url} ${b.url} via PgBouncer :${bouncer.port} -> PostgreSQL 15 :${postgres.port}`);
const client = (url: string, token: string) => createWorkGraphClient({ url, token, retry: { attempts: 3, baseDelayMs: 100, maxDelayMs: 400 }, timeoutMs: 30_000 });
const op = client(a.url, adminToken);
const tokens = await Promise.all(Array.from({ length: AGENTS }, (_, i) => op.tokens.create.mutate({ role: "agent", workerId: `soak-${i}`, label: "soak" })));
const counts = { created: 0, claims: 0, emptyWaits: 0, releases: 0, crashes: 0, staleRefused: 0, staleAccepted: 0, errors: 0, ownLeaseLost: 0, streamEvents: 0 };
const errors: string[] = [];
const end = Date.now() + seconds * 1000;
const creator = (async () => {
  for (let i = 0; Date.now() < end; i++) {
    try {
      await op.workItems.create.mutate({ title: `soak ${i}` });
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
await Promise.all([creator, stream, reads, ...Array.from({ length: AGENTS }, (_, i) => agent(i))]);
await sleep(5_000);
for (const s of servers) await stopServer(s);
const lines = servers.flatMap((s) => s.output().split("\n")).filter(Boolean);
const bad = lines.filter((line) => { try { return JSON.parse(line).level >= 40; } catch { return true; } });
console.log(JSON.stringify({ seconds, counts, logLines: lines.length, warnOrWorse: bad.length }, null, 1));
for (const line of bad.slice(0, 20)) console.log("LOG", line.slice(0, 400));
for (const e of errors.slice(0, 10)) console.log("ERR", e.slice(0, 400));
await bouncer.stop();
await postgres.stop();
data.remove();
process.exit(0);
