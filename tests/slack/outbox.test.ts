import { describe, expect, onTestFinished } from "vitest";
import { slackApp } from "../../server/integrations/slack/client";
import { slackAppDelivery, syncSlackAppWebhook } from "../../server/integrations/slack/deliver";
import { startWebhookDispatcher } from "../../server/integrations/webhooks/dispatcher";
import { askQuestion, buttonsOf, CHANNEL, FAST_RETRY, messageOf, postedMessage, postsOf, PUBLIC_URL, settingsFor, slackTestRetrying, updatesOf } from "./support";
import { testInstance } from "../support/database";

/*
 * Issue 28: the Slack app's posts and updates go through the webhook outbox: retried with
 * backoff while Slack's API is down, nothing lost and nothing sent twice, one instance at a time.
 * The instances retry on FAST_RETRY's schedule, so a few seconds of outage hold several retries.
 */

const OUTAGE_MS = 10_000;

const it = slackTestRetrying(FAST_RETRY).extend("instanceB", { scope: "file" }, async ({ database, slack }, { onCleanup }) => {
  const instance = testInstance(database.url, { poolSize: 5 });
  const db = instance.db;
  const errors: unknown[] = [];
  const dispatcher = startWebhookDispatcher(db, { publicUrl: PUBLIC_URL, owned: { slack_app: slackAppDelivery(db, slackApp(settingsFor(slack)), PUBLIC_URL) }, retry: FAST_RETRY, onError: (error) => errors.push(error) });
  onCleanup(async () => {
    await dispatcher.stop();
    await instance.close();
    expect(errors).toEqual([]);
  });
  return db;
});

describe("the Slack app's outbox", () => {
  it("keeps retrying while Slack's API is down; once it is back the request is posted once and its answer updates it once", { timeout: 240_000 }, async ({ people, slack, sql, slackWebhookId }) => {
    const deliveriesOf = async (eventType: string) =>
      (await people.admin.webhooks.deliveries({ webhookId: slackWebhookId })).filter((d) => d.eventType === eventType);

    slack.setDown(true);
    onTestFinished(() => slack.setDown(false));
    const downSince = Date.now();
    const refusedBefore = slack.refused();
    const request = await askQuestion(people, "outage-1", { question: "Proceed?", options: ["Go", "Stop"] });
    // Two failed attempts at least: a retry happened, with backoff, and each is recorded for the Webhooks page.
    // (A delivery's attempts count up when an attempt starts, so wait for Slack to have refused two.)
    await expect.poll(() => slack.refused() - refusedBefore, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    await expect.poll(async () => (await deliveriesOf("attention.requested"))[0], { timeout: 30_000 })
      .toMatchObject({ status: "pending", error: "Slack answered HTTP 503", responseStatus: null });
    expect((await deliveriesOf("attention.requested"))[0]!.attempts).toBeGreaterThanOrEqual(2);
    expect((await people.admin.webhooks.list()).find((w) => w.id === slackWebhookId)).toMatchObject({ failing: true, lastError: "Slack answered HTTP 503" });
    expect(postsOf(slack, request.id)).toEqual([]);
    // The backoff (doubling, at most FAST_RETRY.maxDelaySeconds apart) keeps going through the outage.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, OUTAGE_MS - (Date.now() - downSince))));
    expect(postsOf(slack, request.id)).toEqual([]);
    expect((await deliveriesOf("attention.requested"))[0]?.attempts).toBeGreaterThanOrEqual(4);

    slack.setDown(false);
    await expect.poll(() => postsOf(slack, request.id).length, { timeout: 90_000 }).toBe(1);
    await expect.poll(async () => (await deliveriesOf("attention.requested"))[0]?.status).toBe("delivered");
    expect((await people.admin.webhooks.list()).find((w) => w.id === slackWebhookId)).toMatchObject({ failing: false, lastError: null });

    // Down again while the request is answered in the dashboard: the update waits, then arrives once.
    slack.setDown(true);
    await people.operator.attention.resolve({ id: request.id, resolution: "Go" });
    await expect.poll(async () => (await deliveriesOf("attention.resolved"))[0]?.attempts ?? 0, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    const { ts } = await postedMessage(sql, request.id);
    expect(updatesOf(slack, ts)).toEqual([]);
    slack.setDown(false);
    await expect.poll(() => updatesOf(slack, ts).length, { timeout: 30_000 }).toBe(1);
    await expect.poll(async () => (await deliveriesOf("attention.resolved"))[0]?.status).toBe("delivered");
    expect(postsOf(slack, request.id)).toHaveLength(1);
  });

  it("a request answered before Slack could be reached is posted once, already showing the answer", async ({ people, slack, sql, slackWebhookId }) => {
    slack.setDown(true);
    onTestFinished(() => slack.setDown(false));
    const request = await askQuestion(people, "outage-2", { question: "Which region?", options: ["eu", "us"] });
    await people.operator.attention.resolve({ id: request.id, resolution: "eu" });
    const deliveries = async () => (await people.admin.webhooks.deliveries({ webhookId: slackWebhookId })).filter((d) => d.status === "pending");
    // Both the post and the update have been tried and failed.
    await expect.poll(async () => (await deliveries()).filter((d) => d.attempts >= 1 && d.error !== null).length, { timeout: 30_000 }).toBe(2);
    slack.setDown(false);
    await expect.poll(async () => messageOf(sql, request.id), { timeout: 30_000 }).toBeTruthy();
    await expect.poll(async () => (await deliveries()).length, { timeout: 30_000 }).toBe(0);
    const { ts } = await postedMessage(sql, request.id);
    const posts = slack.of("chat.postMessage").filter((c) => `${c.args.text}`.includes("Which region?"));
    expect(posts).toHaveLength(1);
    expect(buttonsOf(posts[0]!)).toEqual([]);
    expect(JSON.stringify(posts[0]!.args.blocks)).toContain("Answered by");
    // The update found the message posted (or posted after it): at most one update, showing the same answer.
    for (const update of updatesOf(slack, ts)) expect(JSON.stringify(update.args.blocks)).toContain("eu");
  });

  it("two instances: one Slack app webhook however many start, and each request is posted once", async ({ database, people, slack, sql, slackWebhookId, instanceB }) => {
    const app = slackApp(settingsFor(slack));
    const ids = await Promise.all([syncSlackAppWebhook(database.db, app), syncSlackAppWebhook(instanceB, app), syncSlackAppWebhook(database.db, app)]);
    expect(new Set(ids).size).toBe(1);
    expect((await people.admin.webhooks.list()).filter((w) => w.format === "slack_app")).toHaveLength(1);

    const requests = await Promise.all(Array.from({ length: 8 }, (_, n) => askQuestion(people, `twice-${n}`, { question: `Question ${n}?`, options: ["A"] })));
    for (const request of requests) await expect.poll(async () => messageOf(sql, request.id)).toBeTruthy();
    await expect.poll(async () => (await people.admin.webhooks.deliveries({ webhookId: slackWebhookId })).filter((d) => d.status === "pending").length).toBe(0);
    for (const request of requests) expect(postsOf(slack, request.id)).toHaveLength(1);
  });

  it("Send test event on the Slack app's webhook posts a test message to the channel", async ({ people, slack, slackWebhookId }) => {
    const queued = await people.admin.webhooks.test({ id: slackWebhookId });
    await expect.poll(async () => (await people.admin.webhooks.deliveries({ webhookId: slackWebhookId })).find((d) => d.id === queued.id)?.status).toBe("delivered");
    const [posted] = slack.of("chat.postMessage").filter((call) => String(call.args.text).includes("the Slack app works"));
    expect(posted!.args.channel).toBe(CHANNEL);
  });
});
