import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createWorkGraphClient } from "../../packages/agent/src/sdk/client";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../server/database/embedded";
import { call, postmasterPid, startServer, stopServer, tempDataDir, waitReady } from "../../scripts/server-process";

/** With DATABASE_URL the app does not own the database: when it goes away and comes back, the pool reconnects. */
describe("database death and recovery via DATABASE_URL", () => {
  const data = tempDataDir();
  const appData = tempDataDir();
  let database: EmbeddedDatabase | undefined;
  afterAll(async () => {
    await database?.stop();
    data.remove();
    appData.remove();
  });

  it("answers 503 UNAVAILABLE while the separately run PostgreSQL is down and serves again once it is back", async () => {
    const cluster = path.join(data.dir, "pg");
    database = await startEmbeddedPostgres({ dataDir: cluster, durable: false });
    const server = await startServer({ dataDir: appData.dir, env: { DATABASE_URL: database.url } });
    try {
      await waitReady(server);
      expect(server.output()).not.toMatch(/starting embedded PostgreSQL/);

      await database.stop(); // what a managed database's failover or restart looks like from here
      const outage = await call(server.url, "/api/trpc/workItems.list?input=%7B%7D", { token: server.adminToken });
      expect(outage.status).toBe(503);
      expect(outage.body.error.data.reason).toBe("UNAVAILABLE");
      expect(outage.text).not.toContain(String(database.port));
      expect((await call(server.url, "/api/health/ready")).status).toBe(503);
      const sdkCall = createWorkGraphClient({ url: server.url, token: server.adminToken, retry: { attempts: 60, baseDelayMs: 100, maxDelayMs: 500 } })
        .workItems.list.query({});

      database = await startEmbeddedPostgres({ dataDir: cluster, port: database.port, durable: false });
      await expect
        .poll(async () => (await call(server.url, "/api/trpc/workItems.list?input=%7B%7D", { token: server.adminToken })).status, { message: "the API to serve again", timeout: 60_000, interval: 100 })
        .toBe(200);
      await expect(sdkCall).resolves.toMatchObject({ items: [] });
      await expect.poll(async () => (await call(server.url, "/api/health/ready")).status, { message: "readiness", timeout: 30_000, interval: 100 }).toBe(200);
      expect(server.output().match(/database unavailable/g)).toHaveLength(1);
    } finally {
      await stopServer(server);
    }
    expect(server.output()).toMatch(/"msg":"stopped"/);
  });
});

/**
 * A database that accepts connections and never answers (PostgreSQL hung, or a network black hole
 * in front of it) must not hang the API: a request waits at most WORK_GRAPH_DB_CONNECT_TIMEOUT_MS
 * for a connection, then answers 503 UNAVAILABLE; once the database answers again, so does the API.
 */
describe("a hung database via DATABASE_URL", () => {
  const data = tempDataDir();
  const appData = tempDataDir();
  let database: EmbeddedDatabase | undefined;
  let stopped: number | undefined;
  afterAll(async () => {
    if (stopped) process.kill(stopped, "SIGCONT");
    await database?.stop();
    data.remove();
    appData.remove();
  });

  it("answers 503 UNAVAILABLE within the connect timeout while PostgreSQL accepts but never answers, and serves again once it does", async () => {
    const cluster = path.join(data.dir, "pg");
    database = await startEmbeddedPostgres({ dataDir: cluster, durable: false });
    const server = await startServer({ dataDir: appData.dir, env: { DATABASE_URL: database.url, WORK_GRAPH_DB_CONNECT_TIMEOUT_MS: "1000" } });
    const list = () => call(server.url, "/api/trpc/workItems.list?input=%7B%7D", { token: server.adminToken, signal: AbortSignal.timeout(20_000) });
    const killer = new pg.Client({ connectionString: database.url });
    await killer.connect();
    try {
      await waitReady(server);
      expect((await list()).status).toBe(200);

      // The postmaster stopped: new connections are accepted by the kernel and never answered.
      // The app's open connections are ended, so every request needs a new one.
      stopped = postmasterPid(cluster);
      process.kill(stopped, "SIGSTOP");
      await killer.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'");

      const started = performance.now();
      const hung = await list();
      const waited = performance.now() - started;
      expect(hung.status).toBe(503);
      expect(hung.body.error.data.reason).toBe("UNAVAILABLE");
      expect(hung.text).not.toContain(String(database.port));
      expect(waited).toBeLessThan(10_000); // one connect timeout (1 s) plus start-up work; without one it never answers
      expect((await call(server.url, "/api/health/ready", { signal: AbortSignal.timeout(20_000) })).status).toBe(503);

      process.kill(stopped, "SIGCONT");
      stopped = undefined;
      await expect.poll(async () => (await list()).status, { message: "the API to serve again", timeout: 30_000, interval: 100 }).toBe(200);
    } finally {
      await killer.end().catch(() => {});
      await stopServer(server);
    }
  });
});

/** `npm start` on a DATABASE_URL whose database does not exist yet creates it, even when two instances start together. */
describe("a DATABASE_URL naming a database that does not exist yet", () => {
  const data = tempDataDir();
  const appData = [tempDataDir(), tempDataDir(), tempDataDir()];
  let database: EmbeddedDatabase | undefined;
  afterAll(async () => {
    await database?.stop();
    data.remove();
    for (const dir of appData) dir.remove();
  });

  const withDatabase = (url: string, name: string, credentials?: { user: string; password: string }) => {
    const target = new URL(url);
    target.pathname = `/${name}`;
    if (credentials) {
      target.username = credentials.user;
      target.password = credentials.password;
    }
    return target.href;
  };

  it("creates it when two instances start on it together, and both serve", async () => {
    database = await startEmbeddedPostgres({ dataDir: path.join(data.dir, "pg"), durable: false });
    const url = withDatabase(database.url, "absent_until_now");
    const servers = await Promise.all(appData.slice(0, 2).map((dir) => startServer({ dataDir: dir.dir, env: { DATABASE_URL: url } })));
    try {
      await Promise.all(servers.map((server) => waitReady(server)));
      for (const server of servers) expect((await call(server.url, "/api/trpc/workItems.list?input=%7B%7D", { token: server.adminToken })).status).toBe(200);
    } finally {
      await Promise.all(servers.map((server) => stopServer(server)));
    }
  }, 240_000);

  it("says what to run when its role may not create databases", async () => {
    const admin = new pg.Client({ connectionString: database!.adminUrl });
    await admin.connect();
    try {
      await admin.query("CREATE ROLE limited_role LOGIN NOCREATEDB PASSWORD 'limited-password'");
    } finally {
      await admin.end();
    }
    const url = withDatabase(database!.url, "never_created", { user: "limited_role", password: "limited-password" });
    const server = await startServer({ dataDir: appData[2]!.dir, env: { DATABASE_URL: url } });
    const exit = await server.exited;
    expect(exit.code).toBe(1);
    expect(server.output()).toContain('database \\"never_created\\" does not exist, and role \\"limited_role\\" may not create it');
    expect(server.output()).toContain("CREATE DATABASE");
  }, 120_000);
});
