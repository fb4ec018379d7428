import { randomBytes } from "node:crypto";
import type pg from "pg";
import { expect, vi } from "vitest";
import type { SlackSettings } from "../../server/config";
import { slackApp } from "../../server/integrations/slack/client";
import { slackAppDelivery, syncSlackAppWebhook } from "../../server/integrations/slack/deliver";
import { SLACK_INTERACTIONS_PATH } from "../../server/integrations/slack/interactions";
import { startWebhookDispatcher } from "../../server/integrations/webhooks/dispatcher";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../../server/integrations/webhooks/retry";
import { databaseTest, type Actors } from "../support/fixtures";
import { slackSignature, startFakeSlack, type FakeSlack, type SlackCall } from "./fake-slack";

export const CHANNEL = "C0WORKGRAPH";
/** WORK_GRAPH_SLACK_CHANNELS of the tests: project `ops` has a channel of its own. */
export const PROJECT_CHANNELS = new Map([["ops", "C0OPS"]]);
export const PUBLIC_URL = "https://wg.example.com";

/** Fresh per run: no secret is a constant. */
export const botToken = `xoxb-${randomBytes(12).toString("hex")}`;
export const signingSecret = randomBytes(16).toString("hex");

/** An interaction as Slack POSTs it: form-encoded `payload=<json>`, signed now (or at `timestamp`). */
export function signedInteraction(payload: unknown, options: { timestamp?: number; secret?: string } = {}) {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    body,
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": String(timestamp),
      "x-slack-signature": slackSignature(options.secret ?? signingSecret, timestamp, body),
    },
  };
}

/** A button click in the request's message (block_actions), as Slack sends it. */
export function buttonClick(userId: string, action: { action_id: string; value: string }, channel = CHANNEL) {
  return {
    type: "block_actions",
    user: { id: userId, username: userId.toLowerCase(), name: userId.toLowerCase(), team_id: "T0TEAM" },
    api_app_id: "A0APP",
    trigger_id: `${Date.now()}.${randomBytes(4).toString("hex")}`,
    team: { id: "T0TEAM", domain: "example" },
    channel: { id: channel, name: "work" },
    container: { type: "message", channel_id: channel, message_ts: "1700000001.000100" },
    actions: [{ ...action, type: "button", block_id: "b", action_ts: `${Date.now() / 1000}${randomBytes(2).toString("hex")}` }],
  };
}

/** The modal's submission (view_submission) with `text` in its input. */
export function modalSubmission(userId: string, view: { private_metadata: string; callback_id: string }, text: string) {
  return {
    type: "view_submission",
    user: { id: userId, username: userId.toLowerCase(), name: userId.toLowerCase(), team_id: "T0TEAM" },
    team: { id: "T0TEAM", domain: "example" },
    view: { id: `V${randomBytes(4).toString("hex").toUpperCase()}`, hash: "h", ...view, state: { values: { answer: { text: { type: "plain_text_input", value: text } } } } },
  };
}

/** The Slack app's settings, pointed at the fake. */
export const settingsFor = (fake: FakeSlack): SlackSettings => ({ botToken, signingSecret, channel: CHANNEL, channels: PROJECT_CHANNELS, apiUrl: fake.apiUrl });

/**
 * databaseTest with `slack` (the fake Slack Web API), the Slack app's webhook
 * (`slackWebhookId`) and a dispatcher delivering it, as `npm start` sets them up (retrying
 * failures on `retry`'s schedule), and the app's environment variables set for every test
 * (the interactions endpoint reads them).
 */
export const slackTestRetrying = (retry: RetryPolicy) => databaseTest()
  .extend("slack", { scope: "file" }, async ({}, { onCleanup }) => {
    const fake = await startFakeSlack(botToken);
    onCleanup(() => fake.close());
    return fake;
  })
  .extend("slackWebhookId", { scope: "file" }, ({ database, slack }) => syncSlackAppWebhook(database.db, slackApp(settingsFor(slack))))
  .extend("dispatcher", { scope: "file", auto: true }, ({ database, slack, slackWebhookId: _ }, { onCleanup }) => {
    const errors: unknown[] = [];
    const dispatcher = startWebhookDispatcher(database.db, { publicUrl: PUBLIC_URL, owned: { slack_app: slackAppDelivery(database.db, slackApp(settingsFor(slack)), PUBLIC_URL) }, retry, onError: (error) => errors.push(error) });
    onCleanup(async () => {
      await dispatcher.stop();
      expect(errors).toEqual([]);
    });
    return dispatcher;
  })
  // vitest.config.ts puts stubbed variables back after each test: set them for each.
  .extend("slackEnvironment", { auto: true }, ({ slack }) => {
    vi.stubEnv("WORK_GRAPH_SLACK_BOT_TOKEN", botToken);
    vi.stubEnv("WORK_GRAPH_SLACK_SIGNING_SECRET", signingSecret);
    vi.stubEnv("WORK_GRAPH_SLACK_CHANNEL", CHANNEL);
    vi.stubEnv("WORK_GRAPH_SLACK_CHANNELS", [...PROJECT_CHANNELS].map(([project, channel]) => `${project}=${channel}`).join(","));
    vi.stubEnv("WORK_GRAPH_SLACK_API_URL", slack.apiUrl);
    vi.stubEnv("WORK_GRAPH_PUBLIC_URL", PUBLIC_URL);
    return settingsFor(slack);
  });

/** The Slack app's tests as production retries: 2 s, 4 s, 8 s, … */
export const slackTest = slackTestRetrying(DEFAULT_RETRY_POLICY);

/** Retries in a fraction of a second, at most 0.5 s apart: an outage of a few seconds sees several. */
export const FAST_RETRY: RetryPolicy = { ...DEFAULT_RETRY_POLICY, firstDelaySeconds: 0.1, maxDelaySeconds: 0.5 };

/** POSTs a (signed) interaction to the server's endpoint; status and how long the answer took. */
export async function postInteraction(serverUrl: string, request: { body: string; headers: Record<string, string> }, extraHeaders: Record<string, string> = {}) {
  const started = Date.now();
  const response = await fetch(`${serverUrl}${SLACK_INTERACTIONS_PATH}`, { method: "POST", headers: { ...request.headers, ...extraHeaders }, body: request.body });
  return { status: response.status, text: await response.text(), ms: Date.now() - started };
}

/** An agent asks a blocking question with options on a fresh item; returns the request. */
export async function askQuestion(people: Actors, id: string, question: { question: string; options?: string[]; context?: string }, projectId?: string) {
  const agent = await people.agent(`agent-${id}`);
  await people.operator.workItems.create({ id, title: `Item ${id}`, projectId });
  const { lease } = (await agent.leases.claim({ workItemId: id }))!;
  const { request } = await agent.attention.request({ leaseId: lease.id, epoch: lease.epoch, kind: "decision", ...question });
  return request;
}

/** The posts of request `requestId` (its buttons carry the request id). */
export const postsOf = (slack: FakeSlack, requestId: string): SlackCall[] =>
  slack.of("chat.postMessage").filter((call) => JSON.stringify(call.args.blocks ?? "").includes(requestId));

/** Where request `requestId` was posted (slack_messages), once it was. */
/**
 * Where the request was posted, once the app has recorded it: Slack (the fake) answers the post
 * before the app writes the slack_messages row, so a test that saw the post waits for the row.
 */
export async function postedMessage(sql: pg.Client, requestId: string): Promise<{ channel: string; ts: string }> {
  await expect.poll(() => messageOf(sql, requestId), { timeout: 30_000 }).toBeTruthy();
  return (await messageOf(sql, requestId))!;
}

export async function messageOf(sql: pg.Client, requestId: string): Promise<{ channel: string; ts: string } | undefined> {
  const { rows } = await sql.query<{ channel: string; ts: string }>("SELECT channel, ts FROM slack_messages WHERE attention_request_id = $1", [requestId]);
  return rows[0];
}

/** The chat.update calls for the message at `ts`. */
export const updatesOf = (slack: FakeSlack, ts: string): SlackCall[] => slack.of("chat.update").filter((call) => call.args.ts === ts);

/** The buttons of a posted message. */
export function buttonsOf(call: SlackCall): { action_id: string; value?: string; url?: string; text: { text: string } }[] {
  const blocks = call.args.blocks as { type: string; elements?: unknown[] }[];
  return blocks.filter((block) => block.type === "actions").flatMap((block) => block.elements as never[]);
}
