/**
 * `npm run chaos -- --failover [--async] [--smoke]`: failover of the database under the chaos
 * load (RELIABILITY.md, "Failover"). Debian's PostgreSQL 15 runs a primary and a streaming
 * standby made with pg_basebackup (synchronous: `synchronous_standby_names` names it and
 * `synchronous_commit = on`; with --async it is not named). Two app instances use the primary
 * through DATABASE_URL; agents claim, work, crash and replay stale writes as in the chaos run,
 * and every answer they got (claims, releases) is recorded client-side.
 *
 * The failure: the standby stops receiving WAL (its link to the primary stalls), agents keep
 * working for a moment, then the primary and all its processes get SIGKILL. The standby is promoted (`pg_ctl promote`), and the operator's step follows: both
 * app instances restart with DATABASE_URL naming the new primary. Agents finish every item.
 *
 * Checked on the new primary and against the client-side record (all must be 0): an epoch
 * granted twice for an item, two live leases at once on an item, an accepted stale write, a
 * lost item, an acknowledged claim or release missing. With --async the missing ones are the
 * measured cost of asynchronous replication (docs/operations.md, "Failover").
 */
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, chownSync, existsSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import { promisify } from "node:util";
import pg from "pg";
import { createWorkGraphClient, type WorkGraphClient } from "../packages/agent/src/sdk/client";
import { toWorkGraphError } from "../packages/agent/src/sdk/errors";
import { freePort } from "../server/database/embedded";
import { watchParents } from "../server/process/parent-watch";
import { sleep, startServer, stopServer, tempDataDir, until, waitReady, type RunningServer } from "./server-process";

const POSTGRES_BIN = "/usr/lib/postgresql/15/bin";
const STANDBY_NAME = "standby";
const smoke = process.argv.includes("--smoke");
const synchronous = !process.argv.includes("--async");
const config = smoke
  ? { agents: 10, items: 250, steadyMs: 1_500, steadyReleases: 40, crashRate: 0.1, leaseSeconds: 8, workMs: { min: 100, max: 500 }, walStallMs: 1_000, drainDeadlineMs: 120_000 }
  : { agents: 24, items: 2000, steadyMs: 20_000, steadyReleases: 0, crashRate: 0.08, leaseSeconds: 20, workMs: { min: 300, max: 1500 }, walStallMs: 2_000, drainDeadlineMs: 300_000 };
// Leases outlast the app's restart (full run), so a lease lost with the old primary is still
// live for its holder when the new primary can grant the item again.
const log = (message: string) => console.log(`[failover] ${message}`);
const run = promisify(execFile);

/** PostgreSQL refuses to run as root: as root, its commands run as the OS user `postgres`. */
const asPostgres = (command: string, args: string[]) =>
  process.getuid?.() === 0 ? run("runuser", ["-u", "postgres", "--", command, ...args]) : run(command, args);
const bin = (name: string) => path.join(POSTGRES_BIN, name);

interface Cluster {
  dir: string;
  port: number;
  url: string;
}

const databaseUrlOf = (port: number) => `postgres://postgres@127.0.0.1:${port}/workgraph`;

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end().catch(() => {});
  }
}

async function startPrimary(root: string): Promise<Cluster> {
  const dir = path.join(root, "primary");
  const port = await freePort();
  // trust on loopback: a throw-away test cluster; the default pg_hba.conf also allows replication there
  await asPostgres(bin("initdb"), ["-D", dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"]);
  appendFileSync(
    path.join(dir, "postgresql.conf"),
    [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${root}'`,
      `wal_level = replica`,
      `max_wal_senders = 4`,
      `synchronous_commit = on`,
      "",
    ].join("\n"),
  );
  clustersStarted.push({ dir, port, url: databaseUrlOf(port) });
  await asPostgres(bin("pg_ctl"), ["-D", dir, "-l", path.join(root, "primary.log"), "-w", "start"]);
  await asPostgres(bin("createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "workgraph"]);
  return { dir, port, url: databaseUrlOf(port) };
}

/**
 * The standby's link to the primary, through this process: `stall()` holds back what the
 * primary sends (a slow link: the primary's walsender keeps sending, nothing arrives), `cut()`
 * drops the link with whatever it held. (Pausing the walreceiver instead is no stall: the
 * kernel's socket buffers still take the WAL and hand it over on resume.)
 */
async function walLink(primaryPort: number) {
  const sockets = new Set<net.Socket>();
  let stalled = false;
  const server = net.createServer((fromStandby) => {
    const toPrimary = net.connect(primaryPort, "127.0.0.1");
    for (const socket of [fromStandby, toPrimary]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        fromStandby.destroy();
        toPrimary.destroy();
      });
    }
    fromStandby.on("data", (chunk) => toPrimary.write(chunk));
    toPrimary.on("data", (chunk) => {
      if (!stalled) fromStandby.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    stall: () => (stalled = true),
    cut: () => {
      server.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}

async function startStandby(root: string, primary: Cluster, linkPort: number): Promise<Cluster> {
  const dir = path.join(root, "standby");
  const port = await freePort();
  await asPostgres(bin("pg_basebackup"), ["-h", "127.0.0.1", "-p", String(primary.port), "-U", "postgres", "-D", dir, "-R", "-X", "stream", "--checkpoint=fast"]);
  // Later lines win: the port, and the name synchronous_standby_names knows it by.
  appendFileSync(path.join(dir, "postgresql.conf"), `port = ${port}\n`);
  appendFileSync(
    path.join(dir, "postgresql.auto.conf"),
    `primary_conninfo = 'host=127.0.0.1 port=${linkPort} user=postgres application_name=${STANDBY_NAME}'\n`,
  );
  clustersStarted.push({ dir, port, url: databaseUrlOf(port) });
  await asPostgres(bin("pg_ctl"), ["-D", dir, "-l", path.join(root, "standby.log"), "-w", "start"]);
  // Named only now that it exists: until then every commit would wait for it.
  if (synchronous) await query(primary.url, `ALTER SYSTEM SET synchronous_standby_names = '${STANDBY_NAME}'`);
  await query(primary.url, `SELECT pg_reload_conf()`);
  const expected = synchronous ? "sync" : "async";
  await until(`the standby streaming (${expected})`, async () => {
    const rows = await query<{ state: string; sync_state: string }>(
      primary.url,
      `SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1`,
      [STANDBY_NAME],
    );
    return rows[0]?.state === "streaming" && rows[0].sync_state === expected;
  }, 60_000, 100);
  return { dir, port, url: databaseUrlOf(port) };
}

const postmasterPidOf = (cluster: Cluster) => Number(readFileSync(path.join(cluster.dir, "postmaster.pid"), "utf8").split("\n")[0]);

function childrenOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The machine dies: the postmaster and every backend at once, nothing flushed or answered after. */
function killCluster(cluster: Cluster) {
  const postmaster = postmasterPidOf(cluster);
  // postmaster.pid outlives a kill: the number may name another process by now.
  if (!readFileSync(`/proc/${postmaster}/cmdline`, { encoding: "utf8", flag: "r" }).includes(cluster.dir)) return;
  for (const pid of [postmaster, ...childrenOf(postmaster)]) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

interface AcknowledgedLease {
  id: string;
  workItemId: string;
  epoch: number;
  acquiredAt: number;
  expiresAt: number;
  /** From the release's answer, when the release was acknowledged. */
  endedAt: number | null;
}

interface CrashedLease {
  agent: number;
  leaseId: string;
  epoch: number;
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
  sentToPerson: 0,
};
const unexpected: string[] = [];

function noteUnexpected(error: unknown, where: string) {
  counts.unexpectedErrors++;
  if (unexpected.length < 10) unexpected.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
}

function isOutage(error: unknown): boolean {
  const reason = toWorkGraphError(error).reason;
  if (reason === "UNAVAILABLE") counts.unavailableAnswers++;
  return reason === "NETWORK" || reason === "UNAVAILABLE";
}

/** pg_ctl daemonizes the clusters: a failed run stops them itself (each is listed before it starts). */
const clustersStarted: Cluster[] = [];

async function main() {
  if (!existsSync(bin("pg_basebackup"))) {
    console.error(`[failover] needs Debian's PostgreSQL 15 in ${POSTGRES_BIN} (apt-get install postgresql-15)`);
    process.exit(1);
  }
  const startedAt = Date.now();
  const appData = tempDataDir();
  const clusters = tempDataDir();
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }));
    chownSync(clusters.dir, uid, gid);
  }
  const mode = synchronous ? "synchronous" : "asynchronous";
  log(`${smoke ? "smoke" : "full"} run, ${mode} standby: ${config.agents} agents, ${config.items} items, ${config.leaseSeconds} s leases, crash rate ${config.crashRate}; clusters in ${clusters.dir}`);
  const phases: Record<string, number> = {};
  let phaseStartedAt = Date.now();
  const endPhase = (name: string) => {
    phases[name] = Date.now() - phaseStartedAt;
    phaseStartedAt = Date.now();
  };

  const primary = await startPrimary(clusters.dir);
  const link = await walLink(primary.port);
  const standby = await startStandby(clusters.dir, primary, link.port);
  endPhase("primary (initdb), standby (pg_basebackup) streaming");

  const adminToken = `wgx_failover_${randomBytes(18).toString("base64url")}`;
  const started: RunningServer[] = [];
  const launch = async (databaseUrl: string, port?: number) => {
    const server = await startServer({ dataDir: appData.dir, adminToken, port, env: { DATABASE_URL: databaseUrl } });
    started.push(server);
    await waitReady(server);
    return server;
  };
  // A migrates the primary; B starts after it.
  const instances = [{ server: await launch(primary.url) }];
  instances.push({ server: await launch(primary.url) });
  const clientFor = (index: number, token: string): WorkGraphClient =>
    createWorkGraphClient({ url: instances[index]!.server.url, token, retry: { attempts: 3, baseDelayMs: 100, maxDelayMs: 400 }, timeoutMs: 30_000 });
  const admin = clientFor(0, adminToken);
  const itemIds: string[] = [];
  for (let start = 0; start < config.items; start += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, config.items - start) }, (_, i) => admin.workItems.create.mutate({ title: `failover item ${start + i}` })),
    );
    itemIds.push(...batch.map((item) => item.id));
  }
  const tokens = await Promise.all(
    Array.from({ length: config.agents }, (_, i) => admin.tokens.create.mutate({ role: "agent", workerId: `failover-agent-${i}`, label: "failover" })),
  );
  endPhase("start both instances on the primary, seed items");

  const acknowledged = new Map<string, AcknowledgedLease>();
  const claimTimes: number[] = [];
  const crashed: CrashedLease[] = [];
  const releasedItems = new Set<string>();
  let releasedPerDatabase = false;
  let crashing = true;
  let agentsRunning = true;
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
        if (toWorkGraphError(error).reason === "LEASE_NOT_CURRENT") continue;
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
    const clients = instances.map((_, i) => clientFor(i, token));
    let turn = index;
    while (!allReleased() && agentsRunning) {
      const client = clients[turn++ % clients.length]!;
      const due = crashed.findIndex((lease) => lease.agent === index && lease.replayAt <= Date.now());
      if (due >= 0) {
        await replayStale(client, crashed.splice(due, 1)[0]!);
        continue;
      }
      try {
        const claim = await client.leases.claim.mutate({ durationSeconds: config.leaseSeconds });
        if (!claim) {
          await sleep(150);
          continue;
        }
        const { lease } = claim;
        counts.claims++;
        claimTimes.push(Date.now());
        const record: AcknowledgedLease = {
          id: lease.id,
          workItemId: lease.workItemId,
          epoch: lease.epoch,
          acquiredAt: Date.parse(lease.acquiredAt),
          expiresAt: Date.parse(lease.expiresAt),
          endedAt: null,
        };
        acknowledged.set(lease.id, record);
        if (crashing && Math.random() < config.crashRate) {
          counts.crashes++;
          crashed.push({ agent: index, leaseId: lease.id, epoch: lease.epoch, replayAt: Date.now() + (config.leaseSeconds + 1) * 1000 });
          continue;
        }
        await sleep(config.workMs.min + Math.random() * (config.workMs.max - config.workMs.min));
        try {
          const released = await client.leases.release.mutate({ leaseId: lease.id, epoch: lease.epoch, evidence: `done by failover-agent-${index}` });
          counts.releases++;
          record.endedAt = Date.parse(released.lease.endedAt!);
          releasedItems.add(lease.workItemId);
        } catch (error) {
          if (toWorkGraphError(error).reason === "LEASE_NOT_CURRENT") counts.fencedReleases++;
          else if (!isOutage(error)) noteUnexpected(error, "release");
        }
      } catch (error) {
        if (!isOutage(error)) noteUnexpected(error, "claim");
        await sleep(200 + Math.random() * 300);
      }
    }
  };
  const agents = Array.from({ length: config.agents }, (_, i) => agent(i));

  const steady = async (before: string) => {
    const fromReleases = counts.releases;
    const begun = Date.now();
    while (Date.now() - begun < config.steadyMs || counts.releases - fromReleases < config.steadyReleases) {
      if (allReleased()) throw new Error(`every item was released before ${before}: the run needs more items`);
      if (Date.now() - begun > 180_000) throw new Error(`no steady progress before ${before}`);
      await sleep(50);
    }
    endPhase(`steady running, then ${before}`);
  };

  const figures: Record<string, number> = {};
  await steady("the standby stalls");
  // The standby falls behind (a slow link): with a synchronous standby, commits wait for it;
  // with an asynchronous one they are acknowledged without it.
  link.stall();
  const claimsBeforeStall = counts.claims;
  const releasesBeforeStall = counts.releases;
  log(`the standby's link stalls for ${config.walStallMs} ms`);
  await sleep(config.walStallMs);
  figures.claimsAcknowledgedDuringStall = counts.claims - claimsBeforeStall;
  figures.releasesAcknowledgedDuringStall = counts.releases - releasesBeforeStall;
  log(`SIGKILL of the primary (${figures.claimsAcknowledgedDuringStall} claims acknowledged during the stall)`);
  const killedAt = Date.now();
  killCluster(primary);
  link.cut();
  endPhase("standby stalled, then SIGKILL of the primary");

  await asPostgres(bin("pg_ctl"), ["-D", standby.dir, "-w", "promote"]);
  await until("the standby out of recovery", async () => (await query<{ recovering: boolean }>(standby.url, `SELECT pg_is_in_recovery() AS recovering`))[0]?.recovering === false, 60_000, 20);
  const promotedAt = Date.now();
  figures.killToPromotedMs = promotedAt - killedAt;
  log(`standby promoted ${figures.killToPromotedMs} ms after the kill`);
  endPhase("promote the standby");

  // The operator's step: DATABASE_URL names the new primary, and every app instance restarts.
  for (const instance of instances) {
    await stopServer(instance.server, "SIGKILL");
  }
  const restarted = await Promise.all(instances.map((instance) => launch(standby.url, instance.server.port)));
  restarted.forEach((server, i) => (instances[i]!.server = server));
  figures.promotedToAppReadyMs = Date.now() - promotedAt;
  const firstClaim = await until("a claim on the new primary", async () => claimTimes.find((at) => at >= promotedAt), 60_000, 20);
  figures.promotedToFirstClaimMs = firstClaim - promotedAt;
  log(`both instances ready on the new primary after ${figures.promotedToAppReadyMs} ms, first claim after ${figures.promotedToFirstClaimMs} ms`);
  endPhase("re-point and restart both instances, to the first claim");

  await steady("the end of crashes");
  crashing = false;
  const drainDeadline = Date.now() + config.drainDeadlineMs;
  while (!allReleased() && Date.now() < drainDeadline) {
    await sleep(smoke ? 250 : 1000);
    try {
      const open = await admin.attention.list.query({ status: "open", limit: 200 });
      for (const request of open.items.filter((r) => r.workerId === "work-graph")) {
        await admin.attention.resolve.mutate({ id: request.id, resolution: "retry" });
        counts.sentToPerson++;
      }
      const [row] = await query<{ open: number }>(standby.url, `SELECT count(*)::int AS open FROM work_items WHERE id = ANY($1) AND status <> 'released'`, [itemIds]);
      releasedPerDatabase = row?.open === 0;
    } catch (error) {
      if (!isOutage(error)) noteUnexpected(error, "drain");
    }
  }
  for (const lease of crashed.splice(0)) await replayStale(clientFor(1, tokens[lease.agent]!.token), lease);
  agentsRunning = false;
  await Promise.all(agents);
  endPhase("drain the remaining items");

  const one = async (sql: string, params: unknown[] = []) => Number(Object.values((await query(standby.url, sql, params))[0]!)[0]);
  const stored = await query<{ id: string; work_item_id: string; epoch: number; acquired_at: Date; expires_at: Date; ended_at: Date | null; outcome: string | null }>(
    standby.url,
    `SELECT id, work_item_id, epoch, acquired_at, expires_at, ended_at, outcome FROM leases`,
  );
  const storedById = new Map(stored.map((lease) => [lease.id, lease]));
  const missingClaims = [...acknowledged.values()].filter((lease) => !storedById.has(lease.id));
  const missingReleases = [...acknowledged.values()].filter((lease) => lease.endedAt !== null && storedById.get(lease.id)?.outcome !== "released");
  // Every lease a holder was told it had: the new primary's, and the acknowledged ones it lacks.
  const live = new Map<string, { id: string; epoch: number; from: number; to: number }[]>();
  const addLive = (workItemId: string, lease: { id: string; epoch: number; from: number; to: number }) =>
    live.set(workItemId, [...(live.get(workItemId) ?? []), lease]);
  for (const lease of stored) {
    const to = Math.min(lease.expires_at.getTime(), lease.ended_at?.getTime() ?? Infinity);
    addLive(lease.work_item_id, { id: lease.id, epoch: lease.epoch, from: lease.acquired_at.getTime(), to });
  }
  for (const lease of missingClaims) addLive(lease.workItemId, { id: lease.id, epoch: lease.epoch, from: lease.acquiredAt, to: Math.min(lease.expiresAt, lease.endedAt ?? Infinity) });
  let epochsGrantedTwice = 0;
  let overlappingLeases = 0;
  for (const leases of live.values()) {
    const epochs = new Set(leases.map((lease) => lease.epoch));
    epochsGrantedTwice += leases.length - epochs.size;
    for (const a of leases) for (const b of leases) if (a.id < b.id && a.from < b.to && b.from < a.to) overlappingLeases++;
  }
  const results = {
    epochsGrantedTwice,
    overlappingLeases,
    acceptedStaleWrites:
      counts.acceptedStaleWrites +
      (await one(`SELECT count(*) FROM notes WHERE content = 'stale replay'`)) +
      (await one(`SELECT count(*) FROM events WHERE data::text LIKE '%stale replay%'`)),
    lostItems: await one(`SELECT count(*) FROM work_items WHERE id = ANY($1) AND status <> 'released'`, [itemIds]),
    acknowledgedClaimsMissing: missingClaims.length,
    acknowledgedReleasesMissing: missingReleases.length,
    unexpectedErrors: counts.unexpectedErrors,
  };

  await Promise.all(instances.map((instance) => stopServer(instance.server)));
  await asPostgres(bin("pg_ctl"), ["-D", standby.dir, "-m", "fast", "stop"]);
  appData.remove();
  clusters.remove();
  endPhase("checks, stop everything");

  const seconds = ((Date.now() - startedAt) / 1000).toFixed(0);
  console.log(`\n## failover ${smoke ? "smoke" : "full"} run, ${mode} standby (${seconds} s, ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(1)})\n`);
  console.log(`| must be 0 | value |\n|---|---|`);
  for (const [name, value] of Object.entries(results)) console.log(`| ${name} | ${value} |`);
  console.log(`\n| figure | value |\n|---|---|`);
  for (const [name, value] of Object.entries(figures)) console.log(`| ${name} | ${value} |`);
  console.log(`\n| phase | ms |\n|---|---|`);
  for (const [name, value] of Object.entries(phases)) console.log(`| ${name} | ${value} |`);
  console.log(`\n| activity | count |\n|---|---|`);
  for (const [name, value] of Object.entries({ ...counts, leases: stored.length })) console.log(`| ${name} | ${value} |`);
  if (unexpected.length > 0) console.log(`\nunexpected errors (first ${unexpected.length}):\n${unexpected.join("\n")}`);
  const failed = Object.entries(results).filter(([, value]) => value !== 0);
  console.log(failed.length === 0 ? "\nfailover: PASS (every zero is zero)" : `\nfailover: FAIL (${failed.map(([name]) => name).join(", ")})`);
  process.exit(failed.length === 0 ? 0 : 1);
}

function stopClusters() {
  for (const cluster of clustersStarted) {
    try {
      killCluster(cluster);
    } catch {
      // no postmaster.pid, or no such process: nothing left to stop
    }
  }
}
// A bounded run (CI's `timeout` signals npm, whose shell does not pass it on) or ^C: the app
// instances follow their parent, the clusters do not.
const stopAndExit = () => {
  stopClusters();
  process.exit(1);
};
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, stopAndExit);
watchParents(stopAndExit);
main().catch((error) => {
  console.error("[failover] FAILED:", error);
  stopClusters();
  process.exit(1);
});
