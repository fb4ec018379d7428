import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createWorkGraphClient } from "../../packages/agent/src/sdk/client";
import { embeddedDatabaseUrl } from "../../server/database/embedded";
import { postgresProcessesIn } from "../../server/database/stale-processes";
import { lockWaiters } from "../support/fixtures";
import { call, isAlive, postmasterPid, startServer, stopServer, tempDataDir, waitReady, type RunningServer } from "../../scripts/server-process";

/**
 * The real server (scripts/start.ts --api-only, embedded PostgreSQL) killed, restarted and
 * stopped the ways an operator's machine does it (issue 12 items 1–4).
 */
describe("server lifecycle with the embedded database", () => {
  const data = tempDataDir();
  const cluster = path.join(data.dir, "postgres");
  let server: RunningServer;
  const clients: pg.Client[] = [];
  const connect = async () => {
    const client = new pg.Client({ connectionString: embeddedDatabaseUrl(cluster)! });
    client.on("error", () => {}); // the database is killed under it on purpose
    await client.connect();
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await startServer({ dataDir: data.dir });
    await waitReady(server);
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end().catch(() => {})));
    await stopServer(server);
    data.remove();
  });

  it("restarts after kill -9 of the server and its database, ending an orphaned backend and the stale pid files", async () => {
    const busy = await connect();
    const [{ pid: backendPid }] = (await busy.query("SELECT pg_backend_pid() AS pid")).rows as [{ pid: number }];
    // Pure computation: the backend does not notice its postmaster's death and keeps the shared memory.
    void busy.query("SELECT count(*) FROM generate_series(1, 4000000000)").catch(() => {});
    const watcher = await connect();
    await expect
      .poll(async () => (await watcher.query("SELECT state FROM pg_stat_activity WHERE pid = $1", [backendPid])).rows[0]?.state, { message: "the busy backend to run" })
      .toBe("active");
    const firstPostmaster = postmasterPid(cluster);
    server.child.kill("SIGKILL");
    process.kill(firstPostmaster, "SIGKILL");
    await server.exited;
    await expect.poll(() => isAlive(firstPostmaster), { message: "the old postmaster to be gone", timeout: 90_000 }).toBe(false);
    expect(isAlive(backendPid)).toBe(true); // the orphan the next start must deal with

    server = await startServer({ dataDir: data.dir, port: server.port, adminToken: server.adminToken });
    await waitReady(server);
    expect(isAlive(backendPid)).toBe(false);
    expect(server.output()).toMatch(/orphaned PostgreSQL process/);
    const health = await call(server.url, "/api/trpc/health.check");
    expect(health.status).toBe(200);
  });

  it("refuses a second server on the same data directory with a clear message, leaving the first untouched", async () => {
    const second = await startServer({ dataDir: data.dir });
    const { code } = await second.exited;
    expect(code).toBe(1);
    expect(second.output()).toContain(`another Work Graph server (pid ${server.child.pid}) is running on this data directory`);
    expect((await call(server.url, "/api/health/ready")).status).toBe(200);
  });

  it("answers 503 UNAVAILABLE without internals while the database is dead, logs it once, restarts it and recovers; the SDK retries through it", async () => {
    const logBefore = server.output().length;
    const sdk = createWorkGraphClient({ url: server.url, token: server.adminToken, retry: { attempts: 40, baseDelayMs: 100, maxDelayMs: 1000 } });
    process.kill(postmasterPid(cluster), "SIGKILL");

    const outage = await vi.waitFor(async () => {
      const answer = await call(server.url, "/api/trpc/health.check");
      expect(answer.status, "a 503 from health.check").toBe(503);
      return answer;
    }, { timeout: 30_000, interval: 10 });
    // Many calls during the outage: each is a clean 503, and the log still says it once.
    const during = await Promise.all(Array.from({ length: 10 }, () => call(server.url, "/api/trpc/workItems.list?input=%7B%7D", { token: server.adminToken })));
    const sdkCall = sdk.workItems.list.query({});

    expect(outage.body.error.data).toMatchObject({ reason: "UNAVAILABLE", code: "SERVICE_UNAVAILABLE", httpStatus: 503 });
    expect(outage.body.error.message).toBe("the database cannot be reached right now; retry with backoff");
    for (const answer of [outage, ...during]) {
      expect([503, 200]).toContain(answer.status); // 200 once the restart won the race
      expect(answer.text).not.toMatch(/127\.0\.0\.1|prisma|postgres|ECONNREFUSED|stack|\bat \w+ \(/i);
    }

    await expect.poll(async () => (await call(server.url, "/api/trpc/health.check")).status, { message: "health.check to answer 200 again", timeout: 60_000, interval: 100 }).toBe(200);
    await expect.poll(async () => (await call(server.url, "/api/health/ready")).status, { message: "readiness to recover", timeout: 60_000, interval: 100 }).toBe(200);
    await expect(sdkCall).resolves.toMatchObject({ items: expect.any(Array) });

    const log = server.output().slice(logBefore);
    expect(log.match(/database unavailable/g)).toHaveLength(1);
    expect(log).toMatch(/embedded PostgreSQL restarted/);
    expect(log).toMatch(/database available again/);
    expect(log).not.toMatch(/\n\s+at /); // no stack traces
  });

  it("drains a request in flight on SIGTERM: no new connections, the request completes, then everything stops", async () => {
    const created = await call(server.url, "/api/trpc/workItems.create", { method: "POST", token: server.adminToken, body: JSON.stringify({ title: "drain me" }) });
    expect(created.status).toBe(200);
    const id = created.body.result.data.id as string;

    const locker = await connect();
    await locker.query("BEGIN");
    await locker.query("SELECT 1 FROM work_items WHERE id = $1 FOR UPDATE", [id]);
    const inFlight = call(server.url, "/api/trpc/workItems.setPriority", { method: "POST", token: server.adminToken, body: JSON.stringify({ id, priority: 7 }) });
    await expect.poll(() => lockWaiters(locker), { message: "the request to wait on the row lock", timeout: 90_000 }).toBeGreaterThan(0);

    server.child.kill("SIGTERM");
    await expect.poll(() => server.output(), { message: "the server to begin stopping", timeout: 90_000 }).toMatch(/SIGTERM: stopping \(in-flight requests: 1/);
    await expect(fetch(`${server.url}/api/health/live`)).rejects.toThrow(); // the listener is closed
    expect(server.isRunning()).toBe(true); // still waiting for the request

    await locker.query("COMMIT");
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(answer.body.result.data).toMatchObject({ id, priority: 7 });
    const { code } = await server.exited;
    expect(code).toBe(0);
    expect(server.output()).toMatch(/"msg":"stopped"/);
    expect(postgresProcessesIn(cluster)).toEqual([]);
  });

  it("stops promptly on SIGTERM right after its database died", async () => {
    server = await startServer({ dataDir: data.dir, port: server.port, adminToken: server.adminToken });
    await waitReady(server);
    process.kill(postmasterPid(cluster), "SIGKILL");
    await expect.poll(async () => (await call(server.url, "/api/trpc/health.check")).status, { message: "the 503", timeout: 30_000, interval: 10 }).toBe(503);
    const started = Date.now();
    server.child.kill("SIGTERM");
    const { code } = await server.exited;
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(server.output()).toMatch(/"msg":"stopped"/);
    // The server has exited, so a restart its supervisor had in flight is a process by now (spawn returns once the child runs): none may be left.
    expect(postgresProcessesIn(cluster)).toEqual([]);
    expect(readFileSync(path.join(data.dir, "postgres.password"), "utf8").trim()).not.toBe("");
  });
});

describe("SIGTERM to the npm pid", () => {
  const data = tempDataDir();
  afterAll(() => data.remove());

  it("stops the whole server (app and embedded database) when `npm start` is signalled, not just npm", async () => {
    const server = await startServer({ dataDir: data.dir, viaNpm: true });
    try {
      await waitReady(server);
      server.child.kill("SIGTERM"); // what docker stop / systemd send to the main pid
      await vi.waitFor(() => expect(fetch(`${server.url}/api/health/live`), "the port to close").rejects.toThrow(), { timeout: 60_000, interval: 200 });
      await expect.poll(() => postgresProcessesIn(path.join(data.dir, "postgres")), { message: "no PostgreSQL left on the data directory", timeout: 30_000, interval: 100 }).toEqual([]);
      await expect.poll(() => server.output(), { message: "the server to log it stopped", timeout: 30_000, interval: 100 }).toMatch(/"msg":"stopped"/);
    } finally {
      await stopServer(server, "SIGKILL");
    }
  });
});
