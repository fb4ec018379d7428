import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, createWriteStream, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { CLIENT_ID, ADMIN_GROUP, OPERATOR_GROUP, startTestProvider, type TestProvider } from "../support/oidc-provider";

/*
 * An app of its own for the single sign-on browser tests: the runner's app has no identity
 * provider, so this starts `npm start` (scripts/start.ts) again on another port, with a fresh
 * embedded database and the OIDC settings pointing at a real `oidc-provider` on loopback
 * (tests/support/oidc-provider.ts), which runs in the test process.
 */

const root = path.resolve(import.meta.dirname, "../..");

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface SsoApp {
  url: string;
  adminToken: string;
  provider: TestProvider;
  stop(): Promise<void>;
}

export async function startSsoApp(): Promise<SsoApp> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const provider = await startTestProvider(url);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "work-graph-sso-"));
  chmodSync(dataDir, 0o755); // as root, PostgreSQL runs as the OS user `postgres`
  const adminToken = `wgx_sso_${randomBytes(18).toString("base64url")}`;
  const env = { ...process.env };
  delete env.DATABASE_URL;
  Object.assign(env, {
    PORT: String(port),
    HOST: "127.0.0.1",
    WORK_GRAPH_DATA_DIR: dataDir,
    WORK_GRAPH_ADMIN_TOKEN: adminToken,
    WORK_GRAPH_PUBLIC_URL: url,
    WORK_GRAPH_OIDC_ISSUER: provider.issuer,
    WORK_GRAPH_OIDC_CLIENT_ID: CLIENT_ID,
    WORK_GRAPH_OIDC_CLIENT_SECRET: provider.clientSecret,
    WORK_GRAPH_OIDC_ADMIN_GROUPS: ADMIN_GROUP,
    WORK_GRAPH_OIDC_OPERATOR_GROUPS: OPERATOR_GROUP,
    NEXT_TELEMETRY_DISABLED: "1",
  });
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", path.join(root, "scripts", "start.ts")], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  const log = createWriteStream(path.join(root, "test-results", "sso-server.log"));
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  let exited = false;
  const gone = new Promise<void>((resolve) => child.on("exit", () => resolve(void (exited = true))));

  const stop = async () => {
    if (!exited) {
      child.kill("SIGINT");
      await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 30_000))]);
      if (!exited) child.kill("SIGKILL");
    }
    await provider.close();
    rmSync(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 240_000;
  for (;;) {
    if (exited) {
      await stop();
      throw new Error("the SSO app exited before it was healthy (test-results/sso-server.log)");
    }
    const healthy = await fetch(`${url}/api/trpc/health.check`).then((response) => response.ok, () => false);
    if (healthy) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error("the SSO app was not healthy within 240 s (test-results/sso-server.log)");
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { url, adminToken, provider, stop };
}
