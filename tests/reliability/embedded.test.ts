import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { LEGACY_PASSWORD, passwordFile, startEmbeddedPostgres, type SupervisorEvent } from "../../server/database/embedded";
import { isAlive, postmasterPid, tempDataDir } from "../../scripts/server-process";

/** server/database/embedded.ts: the cluster's password (issue 10 item 1), leftovers of crashes, supervision. */

async function connectAs(port: number, password: string) {
  const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password, database: "postgres" });
  await client.connect();
  return client;
}

async function refusal(port: number, password: string): Promise<string | undefined> {
  try {
    await (await connectAs(port, password)).end();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

describe("embedded PostgreSQL", () => {
  const data = tempDataDir();
  const cluster = path.join(data.dir, "postgres");
  afterAll(() => data.remove());

  it("generates a random password at first start, keeps it in a 0600 file, and refuses the old constant one", async () => {
    const db = await startEmbeddedPostgres({ dataDir: cluster, durable: false });
    try {
      const file = passwordFile(cluster);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const password = readFileSync(file, "utf8").trim();
      expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(await refusal(db.port, LEGACY_PASSWORD)).toBe("28P01"); // invalid_password
      const app = new pg.Client({ connectionString: db.url });
      await app.connect();
      expect((await app.query("SELECT current_database() AS name")).rows[0].name).toBe("work_graph");
      await app.end();
    } finally {
      await db.stop();
    }
  });

  it("keeps a data directory made with the old constant password working, rotating it on start", async () => {
    // Make the cluster what an old release left behind: the constant password, no password file.
    let db = await startEmbeddedPostgres({ dataDir: cluster, durable: false });
    const admin = new pg.Client({ connectionString: db.adminUrl });
    await admin.connect();
    await admin.query(`ALTER ROLE postgres PASSWORD '${LEGACY_PASSWORD}'`);
    await admin.end();
    await db.stop();
    rmSync(passwordFile(cluster));

    db = await startEmbeddedPostgres({ dataDir: cluster, durable: false });
    try {
      const rotated = readFileSync(passwordFile(cluster), "utf8").trim();
      expect(rotated).not.toBe(LEGACY_PASSWORD);
      expect(statSync(passwordFile(cluster)).mode & 0o777).toBe(0o600);
      await (await connectAs(db.port, rotated)).end();
      expect(await refusal(db.port, LEGACY_PASSWORD)).toBe("28P01");
    } finally {
      await db.stop();
    }
  });

  it("starts over a stale postmaster.pid naming a zombie process, on the same remembered port", async () => {
    const first = await startEmbeddedPostgres({ dataDir: cluster, durable: false });
    await first.stop();
    // `sh` forks a child that exits, then execs `sleep`, which never reaps it: a zombie.
    const parent = spawn("sh", ["-c", "sleep 0 & exec sleep 60"], { stdio: "ignore" });
    const zombie = await vi.waitFor(() => {
      const children = readFileSync(`/proc/${parent.pid}/task/${parent.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
      const found = children.find((pid) => readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z "));
      expect(found, "a zombie child").toBeDefined();
      return found!;
    }, { timeout: 90_000, interval: 100 });
    try {
      const lockFile = path.join(cluster, "postmaster.pid");
      writeFileSync(lockFile, `${zombie}\n${cluster}\n`);
      const db = await startEmbeddedPostgres({ dataDir: cluster, durable: false });
      try {
        expect(db.port).toBe(first.port);
        expect(postmasterPid(cluster)).not.toBe(zombie);
      } finally {
        await db.stop();
      }
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("restarts a supervised server that was killed, on the same port", async () => {
    const events: SupervisorEvent["type"][] = [];
    const db = await startEmbeddedPostgres({ dataDir: cluster, durable: false, onSupervisorEvent: (event) => events.push(event.type) });
    try {
      const killed = postmasterPid(cluster);
      process.kill(killed, "SIGKILL");
      await expect.poll(() => events.includes("restarted"), { message: "the restart", timeout: 60_000 }).toBe(true);
      expect(events[0]).toBe("exited");
      expect(isAlive(killed)).toBe(false);
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      expect((await client.query("SELECT 1 AS one")).rows[0].one).toBe(1);
      await client.end();
    } finally {
      await db.stop();
    }
    expect(existsSync(path.join(cluster, "postmaster.pid"))).toBe(false);
  });
});
