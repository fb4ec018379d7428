import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect } from "vitest";
import { authenticate, createToken, ensureAdminToken, hashToken, revokeToken } from "../../server/auth/tokens";
import { projectRoot } from "../../server/database/migrate";
import { databaseTest } from "../support/fixtures";
import { testInstance } from "../support/database";

/*
 * Issue 10.7 and 12.5: WORK_GRAPH_ADMIN_TOKEN must be long, must not be revoked or a
 * non-admin token, and instances starting together on one database bootstrap the admin
 * token exactly once without failing.
 */

const it = databaseTest().extend("otherInstance", { scope: "file" }, ({ database }, { onCleanup }) => {
  const instance = testInstance(database.url, { poolSize: 2 });
  onCleanup(() => instance.close());
  return instance.db;
});
const secret = (tag: string) => `${tag}-${"s".repeat(40)}`;

describe("WORK_GRAPH_ADMIN_TOKEN", () => {
  it("shorter than 32 characters: refused with a message saying what to do", async ({ database }) => {
    await expect(ensureAdminToken(database.db, "a")).rejects.toThrow(/WORK_GRAPH_ADMIN_TOKEN is 1 characters long; it must have at least 32/);
    await expect(ensureAdminToken(database.db, "x".repeat(31))).rejects.toThrow(/openssl rand/);
    expect(await authenticate(database.db, "a")).toBeNull();
  });

  it("a new long secret becomes an admin token, once", async ({ database }) => {
    const token = secret("fresh");
    expect(await ensureAdminToken(database.db, token)).toBeNull();
    expect(await ensureAdminToken(database.db, token)).toBeNull();
    expect(await authenticate(database.db, token)).toMatchObject({ role: "admin" });
  });

  it("a revoked env token is a clear error, not a unique-constraint crash", async ({ database }) => {
    const token = secret("revoked");
    await ensureAdminToken(database.db, token);
    const { tokenId } = (await authenticate(database.db, token))!;
    await revokeToken(database.db, tokenId);
    await expect(ensureAdminToken(database.db, token)).rejects.toThrow(
      new RegExp(`WORK_GRAPH_ADMIN_TOKEN is a revoked token \\(id ${tokenId}\\)\\. Set WORK_GRAPH_ADMIN_TOKEN to a new secret`),
    );
  });

  it("an env value that is an operator or agent token is a clear error, not a silent operator", async ({ database }) => {
    const operator = secret("operator");
    await createToken(database.db, { role: "operator", label: "ops" }, operator);
    await expect(ensureAdminToken(database.db, operator)).rejects.toThrow(/is an existing operator token .*not an admin token/);
    const agent = secret("agent");
    await createToken(database.db, { role: "agent", workerId: "w" }, agent);
    await expect(ensureAdminToken(database.db, agent)).rejects.toThrow(/is an existing agent token/);
    expect(await authenticate(database.db, operator)).toMatchObject({ role: "operator" });
  });

  it("`npm start` with a short value exits at once with the message, before starting anything", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "wg-short-token-"));
    try {
      const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const env: NodeJS.ProcessEnv = { ...process.env, WORK_GRAPH_ADMIN_TOKEN: "short", WORK_GRAPH_DATA_DIR: dataDir };
        delete env.DATABASE_URL;
        execFile(process.execPath, [path.join(projectRoot(), "node_modules", "tsx", "dist", "cli.mjs"), "scripts/start.ts"], { cwd: projectRoot(), env, timeout: 60_000 }, (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, output: stdout + stderr }),
        );
      });
      expect(result.code).toBe(1);
      expect(result.output).toContain("\"msg\":\"failed to start: WORK_GRAPH_ADMIN_TOKEN is 5 characters long; it must have at least 32");
      expect(result.output).not.toContain("starting embedded PostgreSQL");
      expect(result.output).not.toMatch(/\bat .+\.ts:\d+/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("concurrent bootstrap (12.5)", () => {
  it("two instances with the same env token, racing on real connections: neither fails, one token exists", async ({ database, otherInstance }) => {
    for (let round = 0; round < 30; round++) {
      const token = secret(`race-${round}`);
      const results = await Promise.allSettled([ensureAdminToken(database.db, token), ensureAdminToken(otherInstance, token)]);
      expect(results.map((result) => result.status), `round ${round}: ${JSON.stringify(results)}`).toEqual(["fulfilled", "fulfilled"]);
      const rows = await database.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM api_tokens WHERE token_hash = ${hashToken(token)}`;
      expect(rows[0]!.n).toBe(1);
    }
  });

  it("two instances without an env token on an empty database: exactly one admin token is generated and printed", async ({ database, otherInstance }) => {
    for (let round = 0; round < 30; round++) {
      await database.db.$executeRaw`DELETE FROM api_tokens`;
      const results = await Promise.all([ensureAdminToken(database.db), ensureAdminToken(otherInstance)]);
      expect(results.filter((token) => token !== null), `round ${round}`).toHaveLength(1);
      const rows = await database.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM api_tokens WHERE role = 'admin'`;
      expect(rows[0]!.n).toBe(1);
    }
  });
});
