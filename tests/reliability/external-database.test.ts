import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createWorkGraphClient } from "../../packages/agent/src/sdk/client";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../server/database/embedded";
import { call, startServer, stopServer, tempDataDir, until, waitReady } from "../../scripts/server-process";

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
      await until("the API to serve again", async () => (await call(server.url, "/api/trpc/workItems.list?input=%7B%7D", { token: server.adminToken })).status === 200, 60_000);
      await expect(sdkCall).resolves.toMatchObject({ items: [] });
      await until("readiness", async () => (await call(server.url, "/api/health/ready")).status === 200, 30_000);
      expect(server.output().match(/database unavailable/g)).toHaveLength(1);
    } finally {
      await stopServer(server);
    }
    expect(server.output()).toMatch(/\[work-graph\] stopped/);
  });
});
