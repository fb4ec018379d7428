import { createHmac, randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createToken, forgetAuthenticatedTokens } from "../../server/auth/tokens";
import { UNAVAILABLE_MESSAGE } from "../../server/database/availability";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../server/database/embedded";
import { migrateDeploy, projectRoot } from "../../server/database/migrate";
import { CSRF_HEADER } from "@work-graph/contract";
import { SESSION_COOKIE } from "../../server/trpc/init";
import { isAlive, postmasterPid, tempDataDir } from "../../scripts/server-process";
import * as healthLive from "../../app/api/health/live/route";
import * as healthReady from "../../app/api/health/ready/route";
import * as metrics from "../../app/api/metrics/route";
import * as session from "../../app/api/session/route";
import * as trpc from "../../app/api/trpc/[trpc]/route";
import * as oidcLogin from "../../app/api/auth/oidc/login/route";
import * as oidcCallback from "../../app/api/auth/oidc/callback/route";
import * as slackInteractions from "../../app/api/integrations/slack/interactions/route";
import * as githubWebhook from "../../app/api/integrations/github/webhook/route";

/**
 * Issue 12: every HTTP route outside tRPC's own error handling (the route handlers of app/api/,
 * which `next start` serves — the dashboard login among them — and server/http/) answers a
 * database outage like the API does: 503 with reason UNAVAILABLE and no internals, never a 500;
 * and works again once the database is back. The handlers run in this process on the
 * process-wide client (getDb(), DATABASE_URL) against a real PostgreSQL that is killed with
 * kill -9 and restarted.
 */

const INTERNALS = /127\.0\.0\.1|localhost:\d|prisma|postgres|ECONNREFUSED|ECONNRESET|terminat|stack|\bat \w+ \(/i;
const origin = "http://127.0.0.1:3000";

const data = tempDataDir();
const cluster = path.join(data.dir, "pg");
let database: EmbeddedDatabase;
let operatorToken: string;

const login = (token: string) =>
  session.POST(
    new Request(`${origin}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", [CSRF_HEADER]: "1" },
      body: JSON.stringify({ token }),
    }),
  );
const logout = (sessionId: string) =>
  session.DELETE(new Request(`${origin}/api/session`, { method: "DELETE", headers: { [CSRF_HEADER]: "1", cookie: `${SESSION_COOKIE}=${sessionId}` } }));
const scrape = (token: string) => metrics.GET(new Request(`${origin}/api/metrics`, { headers: { authorization: `Bearer ${token}` } }));
const healthCheck = () => trpc.GET(new Request(`${origin}/api/trpc/health.check`));
const sessionIdOf = (response: Response) => response.headers.get("set-cookie")?.match(new RegExp(`${SESSION_COOKIE}=([^;]+)`))?.[1];

async function read(response: Response) {
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as Record<string, unknown> };
}

/** The app's settings for this file, stubbed again before each test (vitest.config.ts puts stubs back after each one). */
const SLACK_SECRET = randomBytes(16).toString("hex");
const GITHUB_SECRET = randomBytes(16).toString("hex");

function stubSettings() {
  vi.stubEnv("DATABASE_URL", database.url);
  vi.stubEnv("WORK_GRAPH_SLACK_BOT_TOKEN", "xoxb-outage-test");
  vi.stubEnv("WORK_GRAPH_SLACK_SIGNING_SECRET", SLACK_SECRET);
  vi.stubEnv("WORK_GRAPH_SLACK_CHANNEL", "C0OUTAGE");
  vi.stubEnv("WORK_GRAPH_SLACK_API_URL", "http://127.0.0.1:9/api");
  vi.stubEnv("WORK_GRAPH_GITHUB_WEBHOOK_SECRET", GITHUB_SECRET);
  // A provider nobody answers for: sign-in is unavailable, token login still works.
  vi.stubEnv("WORK_GRAPH_OIDC_ISSUER", "http://127.0.0.1:9/issuer");
  vi.stubEnv("WORK_GRAPH_OIDC_CLIENT_ID", "work-graph");
  vi.stubEnv("WORK_GRAPH_OIDC_CLIENT_SECRET", randomBytes(16).toString("hex"));
  vi.stubEnv("WORK_GRAPH_METRICS_CACHE_MS", "0"); // each scrape reads the database
}

beforeAll(async () => {
  // Durable (PostgreSQL's defaults, as the app runs it): with synchronous_commit off, kill -9 would lose the token made below.
  database = await startEmbeddedPostgres({ dataDir: cluster });
  await migrateDeploy(database.url);
  stubSettings();
  delete (globalThis as { workGraphDb?: unknown }).workGraphDb;
  const { getDb } = await import("../../server/db");
  ({ token: operatorToken } = await createToken(getDb(), { role: "operator", label: "outage test" }));
});

beforeEach(stubSettings);
afterAll(async () => {
  const { getDb } = await import("../../server/db");
  await getDb().$disconnect().catch(() => {});
  await database?.stop();
  data.remove();
});

describe("app/api route handlers while the database is down", () => {
  it("every route file under app/api is exercised here", () => {
    const routes = readdirSync(path.join(projectRoot(), "app", "api"), { recursive: true, encoding: "utf8" })
      .filter((file) => path.basename(file) === "route.ts")
      .map((file) => file.split(path.sep).join("/"))
      .sort();
    // A new route must be added to this file, with what it answers during an outage.
    expect(routes).toEqual([
      "auth/oidc/callback/route.ts",
      "auth/oidc/login/route.ts",
      "health/live/route.ts",
      "health/ready/route.ts",
      "integrations/github/webhook/route.ts",
      "integrations/slack/interactions/route.ts",
      "metrics/route.ts",
      "session/route.ts",
      "trpc/[trpc]/route.ts",
    ]);
  });

  it("login, logout and the metrics scrape answer 503 UNAVAILABLE without internals after kill -9 of PostgreSQL, log it once, and work again once it is back", async () => {
    const before = await login(operatorToken);
    expect(before.status).toBe(200);
    const sessionId = sessionIdOf(before);
    expect(sessionId).toBeTruthy();

    // The server's log (pino) writes its lines to stdout.
    const logLines = vi.spyOn(process.stdout, "write");
    try {
      const postmaster = postmasterPid(cluster);
      process.kill(postmaster, "SIGKILL");
      await expect.poll(() => isAlive(postmaster), { message: "PostgreSQL to be gone", timeout: 30_000 }).toBe(false);
      forgetAuthenticatedTokens(); // no cached authentication: the login must ask the database

      const answers = {
        login: await read(await login(operatorToken)),
        loginAgain: await read(await login(operatorToken)),
        logout: await read(await logout(sessionId!)),
        metrics: await read(await scrape(operatorToken)),
      };
      for (const [name, answer] of Object.entries(answers)) {
        expect(answer.status, name).toBe(503);
        expect(answer.body, name).toEqual({ reason: "UNAVAILABLE", message: UNAVAILABLE_MESSAGE });
        expect(answer.text, name).not.toMatch(INTERNALS);
      }
      // The answers of the other routes, for the same outage.
      const ready = await read(await healthReady.GET());
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ status: "unavailable", checks: { database: "unavailable" } });
      const trpcAnswer = await read(await healthCheck());
      expect(trpcAnswer.status).toBe(503);
      expect(trpcAnswer.body.error).toMatchObject({ message: UNAVAILABLE_MESSAGE, data: { reason: "UNAVAILABLE", httpStatus: 503 } });
      const live = await read(healthLive.GET());
      expect(live.status).toBe(200);
      for (const answer of [ready, trpcAnswer, live]) expect(answer.text).not.toMatch(INTERNALS);

      // The integrations: a correctly signed Slack interaction and GitHub delivery need the
      // database (Slack's 300 s window is judged by its clock) and say so; sign-in with a provider
      // that cannot be reached goes back to /login, which says sign-in is unavailable.
      const slackBody = `payload=${encodeURIComponent(JSON.stringify({ type: "block_actions", user: { id: "U0OUTAGE" }, actions: [] }))}`;
      const slackTimestamp = String(Math.floor(Date.now() / 1000));
      const slackAnswer = await read(await slackInteractions.POST(new Request(`${origin}/api/integrations/slack/interactions`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "x-slack-request-timestamp": slackTimestamp,
          "x-slack-signature": `v0=${createHmac("sha256", SLACK_SECRET).update(`v0:${slackTimestamp}:${slackBody}`).digest("hex")}`,
        },
        body: slackBody,
      })));
      const githubBody = JSON.stringify({ action: "opened", issue: { number: 1, title: "Outage", body: null, labels: [{ name: "work-graph" }], state: "open" }, repository: { full_name: "acme/outage" }, sender: { login: "octocat" } });
      const githubAnswer = await read(await githubWebhook.POST(new Request(`${origin}/api/integrations/github/webhook`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "issues",
          "x-github-delivery": "outage-1",
          "x-hub-signature-256": `sha256=${createHmac("sha256", GITHUB_SECRET).update(githubBody).digest("hex")}`,
        },
        body: githubBody,
      })));
      for (const [name, answer] of Object.entries({ slack: slackAnswer, github: githubAnswer })) {
        expect(answer.status, name).toBe(503);
        expect(answer.body, name).toMatchObject({ reason: "UNAVAILABLE" });
        expect(answer.text, name).not.toMatch(INTERNALS);
      }
      for (const response of [await oidcLogin.GET(new Request(`${origin}/api/auth/oidc/login`)), await oidcCallback.GET(new Request(`${origin}/api/auth/oidc/callback?code=x&state=y`))]) {
        expect(response.status).toBe(303);
        expect(response.headers.get("location")).toMatch(/\/login$/);
      }

      const logged = logLines.mock.calls.map(([chunk]) => String(chunk)).join("\n");
      expect(logged.match(/database unavailable/g)).toHaveLength(1);
      expect(logged).not.toMatch(/internal error|\n\s+at /);
    } finally {
      logLines.mockRestore();
    }

    database = await startEmbeddedPostgres({ dataDir: cluster, port: database.port });
    const again = await vi.waitFor(async () => {
      const response = await login(operatorToken);
      expect(response.status, "a login once PostgreSQL is back").toBe(200);
      return response;
    }, { timeout: 60_000, interval: 100 });
    const newSession = sessionIdOf(again);
    expect(newSession).toBeTruthy();
    expect((await logout(newSession!)).status).toBe(200);
    // The session logged in before the outage still exists (its logout never reached the database).
    expect((await logout(sessionId!)).status).toBe(200);
    const scraped = await scrape(operatorToken);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/work_graph_items/);
    expect((await healthCheck()).status).toBe(200);
    expect((await healthReady.GET()).status).not.toBe(500); // 503 here only because no expiry sweep runs in this process
  });

  it("a failure that is not an outage is a generic 500 INTERNAL, the details only in the log", async () => {
    const { failureResponse } = await import("../../server/http/unavailable");
    const answer = await read(failureResponse(new Error("relation \"dashboard_sessions\" does not exist at 127.0.0.1:5432"), "/api/session"));
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({ reason: "INTERNAL", message: "internal error" });
  });
});
