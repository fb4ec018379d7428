/**
 * `npm run chaos [-- --smoke]`: the reliability scenario of RELIABILITY.md against the real
 * server. Two app instances (A with the embedded PostgreSQL, B on A's database via
 * DATABASE_URL), many agents with short leases that crash at random and whose stale writes are
 * replayed after takeover, a kill -9 of instance A and its database mid-run and a restart, then
 * a kill -9 of the database alone (A's supervisor restarts it). Then it checks from the database
 * and the event feed that every guarantee held, and measures the recovery times.
 * Exit code 0 only when every count that must be zero is zero.
 *
 * The smoke profile (CI) runs every phase of the full run with less waiting: its steady
 * periods end after a number of releases (at least `steadyMs`), not after a fixed time, so a
 * loaded machine stretches them instead of skipping work; leases are 2 s and simulated work
 * 0.1–0.5 s; the drain and the final settling poll the database instead of sleeping.
 * It prints how long each phase took.
 *
 * `--failover [--async]`: a primary and a standby PostgreSQL instead, the primary killed and the
 * standby promoted under this load (scripts/chaos-failover.ts).
 */
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { createWorkGraphClient, type WorkGraphClient } from "../packages/agent/src/sdk/client";
import { toWorkGraphError } from "../packages/agent/src/sdk/errors";
import { embeddedDatabaseUrl } from "../server/database/embedded";
import { postmasterPid, sleep, startServer, stopServer, tempDataDir, until, waitReady, type RunningServer } from "./server-process";

const smoke = process.argv.includes("--smoke");
const config = smoke
  ? { agents: 12, items: 300, steadyMs: 1_500, steadyReleases: 40, crashRate: 0.1, leaseSeconds: 2, workMs: { min: 100, max: 500 }, drainDeadlineMs: 120_000 }
  : { agents: 32, items: 5000, steadyMs: 30_000, steadyReleases: 0, crashRate: 0.08, leaseSeconds: 3, workMs: { min: 300, max: 1500 }, drainDeadlineMs: 300_000 };
/** Simulated work per item: long enough that the items last through the crash phase. */
const WORK_MS = config.workMs;
const LEASE_SECONDS = config.leaseSeconds;
const DRAIN_DEADLINE_MS = config.drainDeadlineMs;
const log = (message: string) => console.log(`[chaos] ${message}`);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
};

interface Instance {
  name: "A" | "B";
  server: RunningServer;
  /** Successful claims through this instance (ms since epoch), for restart-to-first-claim. */
  claims: number[];
}

interface CrashedLease {
  /** The agent whose "next process" replays the dead one's writes (its token is bound to the worker). */
  agent: number;
  leaseId: string;
  epoch: number;
  workItemId: string;
  replayAt: number;
}

const counts = {
  claims: 0,
  releases: 0,
  crashes: 0,
  fencedReleases: 0,
  staleReplays: 0,
  acceptedStaleWrites: 0,
  unexpectedErrors: 0,
  unavailableAnswers: 0,
  /** Rule 11 requests (repeated expiry) answered "retry" by the harness during the drain. */
  sentToPerson: 0,
};
const unexpected: string[] = [];

function noteUnexpected(error: unknown, where: string) {
  counts.unexpectedErrors++;
  if (unexpected.length < 10) unexpected.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
}

/** Is this failure the outage we cause on purpose (no answer, or 503)? */
function isOutage(error: unknown): boolean {
  const reason = toWorkGraphError(error).reason;
  if (reason === "UNAVAILABLE") counts.unavailableAnswers++;
  return reason === "NETWORK" || reason === "UNAVAILABLE";
}

/** Resolves the open rule-11 requests (worker `work-graph`) with "retry", as an operator would. */
async function answerRepeatedExpiries(admin: WorkGraphClient) {
  const open = await admin.attention.list.query({ status: "open", limit: 200 });
  for (const request of open.items.filter((r) => r.workerId === "work-graph")) {
    await admin.attention.resolve.mutate({ id: request.id, resolution: "retry" });
    counts.sentToPerson++;
  }
}

async function main() {
  const data = tempDataDir();
  const startedAt = Date.now();
  log(`${smoke ? "smoke" : "full"} run: ${config.agents} agents, ${config.items} items, ${LEASE_SECONDS} s leases, crash rate ${config.crashRate}; data in ${data.dir}`);
  const adminToken = `wgx_chaos_${randomBytes(18).toString("base64url")}`;
  const launch = async (options: Parameters<typeof startServer>[0]) => {
    const server = await startServer(options);
    started.push(server);
    return server;
  };
  // Where the wall time goes, phase by phase (printed with the results).
  const phases: Record<string, number> = {};
  let phaseStartedAt = Date.now();
  const endPhase = (name: string) => {
    phases[name] = Date.now() - phaseStartedAt;
    phaseStartedAt = Date.now();
  };
  const instanceA: Instance = { name: "A", server: await launch({ dataDir: data.dir, adminToken }), claims: [] };
  await waitReady(instanceA.server);
  const databaseUrl = embeddedDatabaseUrl(path.join(data.dir, "postgres"))!;
  // B starts while A seeds the work.
  const instanceB: Instance = {
    name: "B",
    server: await launch({ dataDir: data.dir, adminToken, env: { DATABASE_URL: databaseUrl } }),
    claims: [],
  };
  const instances = [instanceA, instanceB];

  const clientFor = (instance: Instance, token: string): WorkGraphClient =>
    createWorkGraphClient({ url: instance.server.url, token, retry: { attempts: 3, baseDelayMs: 100, maxDelayMs: 400 }, timeoutMs: 30_000 });
  const admin = clientFor(instanceA, adminToken);

  const itemIds: string[] = [];
  for (let start = 0; start < config.items; start += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, config.items - start) }, (_, i) => admin.workItems.create.mutate({ title: `chaos item ${start + i}` })),
    );
    itemIds.push(...batch.map((item) => item.id));
  }
  const tokens = await Promise.all(
    Array.from({ length: config.agents }, (_, i) => admin.tokens.create.mutate({ role: "agent", workerId: `chaos-agent-${i}`, label: "chaos" })),
  );
  await waitReady(instanceB.server);
  log(`instances ready: A ${instanceA.server.url} (embedded PostgreSQL), B ${instanceB.server.url} (same database)`);
  endPhase("start both instances, seed items");

  // The event feed, tailed through both instances in turn the way a consumer would, across every outage.
  const seen = new Set<number>();
  let tailing = true;
  let after = 0;
  const tail = (async () => {
    let turn = 0;
    for (;;) {
      const instance = instances[turn++ % 2]!;
      try {
        const page = await clientFor(instance, adminToken).events.list.query({ after, limit: 500 });
        for (const event of page.items) seen.add(event.sequence);
        if (page.items.length > 0) after = page.items[page.items.length - 1]!.sequence;
        if (page.items.length < 500) {
          if (!tailing) return;
          await sleep(200);
        }
      } catch (error) {
        if (!isOutage(error)) noteUnexpected(error, "events.list");
        await sleep(200);
      }
    }
  })();

  let crashing = true;
  let agentsRunning = true;
  const crashed: CrashedLease[] = [];
  const crashedLeaseIds: string[] = [];
  const releasedItems = new Set<string>();
  // A release whose answer was lost in an outage is only known to the database: it decides too.
  let releasedPerDatabase = false;
  const allReleased = () => releasedPerDatabase || releasedItems.size >= itemIds.length;

  const replayStale = async (client: WorkGraphClient, lease: CrashedLease) => {
    counts.staleReplays++;
    for (const attempt of [
      () => client.leases.note.mutate({ leaseId: lease.leaseId, epoch: lease.epoch, content: "stale replay" }),
      () => client.leases.release.mutate({ leaseId: lease.leaseId, epoch: lease.epoch, evidence: "stale replay" }),
    ]) {
      try {
        await attempt();
        counts.acceptedStaleWrites++;
      } catch (error) {
        const failure = toWorkGraphError(error);
        if (failure.reason === "LEASE_NOT_CURRENT") continue;
        if (isOutage(error)) {
          crashed.push({ ...lease, replayAt: Date.now() + 1000 });
          return;
        }
        noteUnexpected(error, "stale replay");
      }
    }
  };

  const agent = async (index: number) => {
    const token = tokens[index]!.token;
    const clients = instances.map((instance) => ({ instance, client: clientFor(instance, token) }));
    let turn = index;
    while (!allReleased() && agentsRunning) {
      const { instance, client } = clients[turn++ % clients.length]!;
      const due = crashed.findIndex((lease) => lease.agent === index && lease.replayAt <= Date.now());
      if (due >= 0) {
        await replayStale(client, crashed.splice(due, 1)[0]!);
        continue;
      }
      try {
        const claim = await client.leases.claim.mutate({ durationSeconds: LEASE_SECONDS });
        if (!claim) {
          await sleep(150);
          continue;
        }
        counts.claims++;
        instance.claims.push(Date.now());
        const { lease } = claim;
        if (crashing && Math.random() < config.crashRate) {
          counts.crashes++; // the worker dies holding the lease; a later "process" replays its writes
          crashedLeaseIds.push(lease.id);
          crashed.push({ agent: index, leaseId: lease.id, epoch: lease.epoch, workItemId: lease.workItemId, replayAt: Date.now() + (LEASE_SECONDS + 1) * 1000 });
          continue;
        }
        await sleep(WORK_MS.min + Math.random() * (WORK_MS.max - WORK_MS.min));
        try {
          await client.leases.release.mutate({ leaseId: lease.id, epoch: lease.epoch, evidence: `done by chaos-agent-${index}` });
          counts.releases++;
          releasedItems.add(lease.workItemId);
        } catch (error) {
          const failure = toWorkGraphError(error);
          if (failure.reason === "LEASE_NOT_CURRENT") counts.fencedReleases++; // expired during an outage: fenced, as it must be
          else if (!isOutage(error)) noteUnexpected(error, "release");
        }
      } catch (error) {
        if (!isOutage(error)) noteUnexpected(error, "claim");
        await sleep(200 + Math.random() * 300);
      }
    }
  };

  const agents = Array.from({ length: config.agents }, (_, i) => agent(i));
  const figures: Record<string, number> = {};
  // A steady period: at least steadyMs and steadyReleases more releases, so a slow machine
  // stretches it rather than killing things before any work went through.
  const steady = async (before: string) => {
    const fromReleases = counts.releases;
    const begun = Date.now();
    while (Date.now() - begun < config.steadyMs || counts.releases - fromReleases < config.steadyReleases) {
      if (allReleased()) throw new Error(`every item was released before ${before}: the run needs more items`);
      if (Date.now() - begun > 180_000) throw new Error(`no steady progress before ${before} (${counts.releases - fromReleases} releases in 180 s)`);
      await sleep(50);
    }
    endPhase(`steady running, then ${before}`);
  };

  // kill -9 of instance A and its PostgreSQL (the whole server), then a restart.
  // Timeline: steady running, kill -9 of A (server and database) and restart, steady running,
  // kill -9 of the database, steady running; then no more crashes, and every item is finished.
  await steady("kill -9 of instance A");
  const clusterDir = path.join(data.dir, "postgres");
  log("kill -9 of instance A and its embedded PostgreSQL");
  const oldPostmaster = postmasterPid(clusterDir);
  instanceA.server.child.kill("SIGKILL");
  process.kill(oldPostmaster, "SIGKILL");
  await instanceA.server.exited;
  const restartedAt = Date.now();
  instanceA.server = await launch({ dataDir: data.dir, port: instanceA.server.port, adminToken });
  await waitReady(instanceA.server);
  figures.restartToReadyMs = Date.now() - restartedAt;
  const firstClaim = await until("a claim through the restarted instance", async () => instanceA.claims.find((at) => at >= restartedAt), 60_000, 20);
  figures.restartToFirstClaimMs = firstClaim - restartedAt;
  log(`A ready ${figures.restartToReadyMs} ms after restart, first claim through it after ${figures.restartToFirstClaimMs} ms`);
  endPhase("kill -9 of A + restart to its first claim");

  // kill -9 of the database alone: A's supervisor restarts it; both instances reconnect.
  await steady("kill -9 of the database");
  log("kill -9 of the embedded PostgreSQL");
  const killedAt = Date.now();
  process.kill(postmasterPid(clusterDir), "SIGKILL");
  const probe = (instance: Instance) =>
    until(`service on ${instance.name}`, async () => (await fetch(`${instance.server.url}/api/trpc/health.check`)).status === 200 && Date.now(), 120_000, 20);
  await sleep(50);
  const [serviceA, serviceB] = await Promise.all([probe(instanceA), probe(instanceB)]);
  figures.databaseDeathToServiceMs = Math.max(serviceA, serviceB) - killedAt;
  log(`service back ${figures.databaseDeathToServiceMs} ms after the database was killed`);
  endPhase("kill -9 of the database to service on both");

  await steady("the end of crashes");
  crashing = false;
  log(`crash phase over (${counts.crashes} crashes); draining the remaining items`);
  const drainDeadline = Date.now() + DRAIN_DEADLINE_MS;
  while (!allReleased() && Date.now() < drainDeadline) {
    await sleep(smoke ? 250 : 1000);
    // Rule 11 sends an item whose leases kept expiring (crashes do that) to a person: answer like one.
    await answerRepeatedExpiries(admin).catch((error: unknown) => {
      if (!isOutage(error)) noteUnexpected(error, "answering a repeated-expiry request");
    });
    const check = new pg.Client({ connectionString: databaseUrl });
    try {
      await check.connect();
      const { rows } = await check.query(`SELECT count(*)::int AS open FROM work_items WHERE id = ANY($1) AND status <> 'released'`, [itemIds]);
      releasedPerDatabase = rows[0].open === 0;
    } catch {
      // the database may be restarting; ask again
    } finally {
      await check.end().catch(() => {});
    }
  }
  // Stale replays still queued are played now: every lease they name has expired.
  for (const lease of crashed.splice(0)) await replayStale(clientFor(instanceB, tokens[lease.agent]!.token), lease);
  if (!allReleased()) log(`drain deadline passed with ${itemIds.length - releasedItems.size} items unreleased`);
  agentsRunning = false;
  await Promise.all(agents);
  endPhase("drain the remaining items");
  // Quiet now: let the last expiries happen (no lease left open, at most lease + 2 s), then the
  // tailer reads to the end of the feed.
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const settleBy = Date.now() + (LEASE_SECONDS + 2) * 1000;
  while (Date.now() < settleBy) {
    const { rows } = await db.query(`SELECT count(*)::int AS open FROM leases WHERE ended_at IS NULL`);
    if (rows[0].open === 0) break;
    await sleep(100);
  }
  tailing = false;
  await tail;
  endPhase("settle, read the feed to its end");

  const one = async (sql: string, params: unknown[] = []) => Number(Object.values((await db.query(sql, params)).rows[0] as object)[0]);
  const results = {
    duplicateReleases: await one(`SELECT count(*) FROM (SELECT work_item_id FROM leases WHERE outcome = 'released' GROUP BY 1 HAVING count(*) > 1) d`),
    // A replayed write the API accepted, seen by the replayer or left in the database.
    acceptedStaleWrites:
      counts.acceptedStaleWrites +
      (await one(`SELECT count(*) FROM notes WHERE content = 'stale replay'`)) +
      (await one(`SELECT count(*) FROM events WHERE data::text LIKE '%stale replay%'`)),
    // Every seeded item released in the end (a run that could not finish in the drain deadline counts its rest here).
    lostItems: await one(`SELECT count(*) FROM work_items WHERE id = ANY($1) AND status <> 'released'`, [itemIds]),
    overlappingLeases: await one(`
      SELECT count(*) FROM leases a JOIN leases b ON b.work_item_id = a.work_item_id AND b.epoch > a.epoch
       WHERE b.acquired_at < LEAST(a.expires_at, COALESCE(a.ended_at, 'infinity'))`),
    // Events the tailer skipped: in the database, below its cursor, never delivered to it.
    eventFeedGaps: (await db.query<{ sequence: string }>(`SELECT sequence FROM events WHERE sequence <= $1`, [after])).rows.filter(
      (row) => !seen.has(Number(row.sequence)),
    ).length,
    unexpectedErrors: counts.unexpectedErrors,
  };
  // A crashed worker's lease: from its expiry (database clock) to the claim that took the item over.
  const reclaim = (
    await db.query<{ ms: number }>(
      `SELECT extract(epoch FROM (next.acquired_at - crashed.expires_at)) * 1000 AS ms
         FROM leases crashed JOIN leases next ON next.work_item_id = crashed.work_item_id AND next.epoch = crashed.epoch + 1
        WHERE crashed.id = ANY($1::uuid[])`,
      [crashedLeaseIds],
    )
  ).rows.map((row) => Number(row.ms));
  const leaseCount = await one(`SELECT count(*) FROM leases`);
  await db.end();
  figures.reclaimAfterExpiryP50Ms = Math.round(percentile(reclaim, 50));
  figures.reclaimAfterExpiryMaxMs = Math.round(Math.max(...reclaim));

  await Promise.all(instances.map((instance) => stopServer(instance.server)));
  data.remove();
  endPhase("checks, stop both instances");

  const seconds = ((Date.now() - startedAt) / 1000).toFixed(0);
  console.log(`\n## chaos ${smoke ? "smoke" : "full"} run (${seconds} s, ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? "?"})\n`);
  console.log(`| must be 0 | value |\n|---|---|`);
  for (const [name, value] of Object.entries(results)) console.log(`| ${name} | ${value} |`);
  console.log(`\n| figure | value |\n|---|---|`);
  for (const [name, value] of Object.entries(figures)) console.log(`| ${name} | ${value} |`);
  console.log(`| crashed leases reclaimed (measured) | ${reclaim.length} |`);
  console.log(`\n| phase | ms |\n|---|---|`);
  for (const [name, value] of Object.entries(phases)) console.log(`| ${name} | ${value} |`);
  console.log(`\n| activity | count |\n|---|---|`);
  for (const [name, value] of Object.entries({ ...counts, leases: leaseCount, eventsSeen: seen.size })) console.log(`| ${name} | ${value} |`);
  if (unexpected.length > 0) console.log(`\nunexpected errors (first ${unexpected.length}):\n${unexpected.join("\n")}`);
  const failed = Object.entries(results).filter(([, value]) => value !== 0);
  console.log(failed.length === 0 ? "\nchaos: PASS (every zero is zero)" : `\nchaos: FAIL (${failed.map(([name]) => name).join(", ")})`);
  process.exit(failed.length === 0 ? 0 : 1);
}

const started: RunningServer[] = [];
// `--failover`: the database's failover under the same load (scripts/chaos-failover.ts).
if (process.argv.includes("--failover")) void import("./chaos-failover");
else
  main().catch(async (error) => {
    console.error("[chaos] FAILED:", error);
    await Promise.all(started.map((server) => stopServer(server)));
    process.exit(1);
  });
