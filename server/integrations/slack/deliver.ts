import { SlackError, WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebAPIRequestError } from "@slack/web-api";
import type { Db } from "../../db";
import { logger } from "../../log";
import type { AttemptResult } from "../webhooks/statements";
import { insertSlackMessage, postIsPending, selectRequestForSlack, selectSlackMessage, upsertSlackAppWebhook } from "./statements";
import type { ClaimedDelivery } from "../webhooks/claim";
import type { OwnedWebhookDelivery } from "../webhooks/dispatcher";
import { newWebhookSecret, TEST_EVENT_TYPE } from "../webhooks/payload";
import { encryptSecret } from "../webhooks/secret-box";
import type { SlackApp } from "./client";
import { answeredMessage, questionMessage, slackEscape } from "./messages";

/** The events the Slack app's webhook takes: a request is posted, its answer replaces it. */
export const SLACK_APP_EVENTS = ["attention.requested", "attention.resolved"];

/**
 * Creates (or updates) the `slack_app` webhook whose outbox deliveries post and update the
 * Slack messages, so they are retried, shared between instances and shown on the Webhooks page
 * like any webhook's. Its signing secret is never used (nothing is signed for Slack's Web API)
 * but every webhook has one.
 */
export async function syncSlackAppWebhook(db: Db, app: SlackApp): Promise<string> {
  return upsertSlackAppWebhook(db, {
    url: app.settings.apiUrl,
    label: `Slack app → ${app.settings.channel}`,
    events: SLACK_APP_EVENTS,
    secretCiphertext: encryptSecret(newWebhookSecret()),
  });
}

const ok = (responseBody: string): AttemptResult => ({ ok: true, responseStatus: 200, responseBody, error: null });
const failed = (error: string): AttemptResult => ({ ok: false, responseStatus: null, responseBody: null, error: error.slice(0, 300) });

/** A Slack Web API error as the deliveries view shows it (`Slack refused: channel_not_found`, `Slack answered HTTP 503`, …). */
function slackError(error: SlackError): string {
  if (error instanceof WebAPIPlatformError) return `Slack refused: ${error.data.error}`;
  if (error instanceof WebAPIHTTPError) return `Slack answered HTTP ${error.statusCode}`;
  if (error instanceof WebAPIRateLimitedError) return `Slack rate-limited the call (retry after ${error.retryAfter} s)`;
  if (error instanceof WebAPIRequestError) {
    const cause = (error.original as { cause?: { code?: string } }).cause?.code;
    return `could not reach Slack: ${cause ?? error.original.message}`;
  }
  return error.message;
}

async function post(db: Db, app: SlackApp, requestId: string, publicUrl: string): Promise<AttemptResult> {
  const posted = await selectSlackMessage(db, requestId);
  if (posted) return ok(`already posted: ${posted.channel} ${posted.ts}`);
  const request = await selectRequestForSlack(db, requestId);
  if (!request) return ok("no such attention request: nothing to post");
  // Answered before it could be posted: post the answer straight away.
  const message = request.status === "open" ? questionMessage(request, publicUrl) : answeredMessage(request, publicUrl);
  const channel = app.settings.channels.get(request.projectId) ?? app.settings.channel;
  const result = await app.client.chat.postMessage({ channel, ...message, unfurl_links: false });
  await insertSlackMessage(db, requestId, { channel: result.channel!, ts: result.ts! });
  return ok(`posted: ${result.channel} ${result.ts}`);
}

async function update(db: Db, app: SlackApp, webhookId: string, requestId: string, publicUrl: string): Promise<AttemptResult> {
  const posted = await selectSlackMessage(db, requestId);
  if (!posted) {
    // Its post is still to come (it will show the answer) or was never queued (the request predates the Slack app).
    if (await postIsPending(db, webhookId, requestId)) return failed("the request's Slack message is not posted yet");
    return ok("no Slack message for this request: nothing to update");
  }
  const request = (await selectRequestForSlack(db, requestId))!;
  const result = await app.client.chat.update({ channel: posted.channel, ts: posted.ts, ...answeredMessage(request, publicUrl) });
  return ok(`updated: ${result.channel} ${result.ts}`);
}

/**
 * One outbox delivery of the Slack app: chat.postMessage for a new request (once: a retry
 * after a post that was made finds it recorded), chat.update once it is answered, a plain
 * message for a webhook test. Never throws: a failure is recorded and retried with backoff.
 */
async function attemptSlackDelivery(db: Db, app: SlackApp | null, delivery: ClaimedDelivery, publicUrl: string): Promise<AttemptResult> {
  if (!app) return failed("the Slack app is not configured on this instance (WORK_GRAPH_SLACK_BOT_TOKEN, _SIGNING_SECRET, _CHANNEL)");
  const { event } = delivery;
  const requestId = (event.data as { requestId?: unknown }).requestId;
  try {
    if (event.type === TEST_EVENT_TYPE) {
      const result = await app.client.chat.postMessage({ channel: app.settings.channel, text: `Work Graph test message from ${slackEscape(event.actor)}: the Slack app works.` });
      return ok(`posted: ${result.channel} ${result.ts}`);
    }
    if (typeof requestId !== "string") return ok(`nothing to do for ${event.type}`);
    if (event.type === "attention.requested") return await post(db, app, requestId, publicUrl);
    if (event.type === "attention.resolved") return await update(db, app, delivery.webhookId, requestId, publicUrl);
    return ok(`nothing to do for ${event.type}`);
  } catch (error) {
    if (error instanceof SlackError) return failed(slackError(error));
    logger().error({ err: error }, "Slack delivery failed");
    return failed("the delivery failed inside Work Graph (see the server log)");
  }
}

/** How the dispatcher delivers the `slack_app` webhook (DispatcherOptions.owned); `app` null: the Slack app is not configured on this instance. */
export const slackAppDelivery = (db: Db, app: SlackApp | null, publicUrl: string): OwnedWebhookDelivery => (delivery) => attemptSlackDelivery(db, app, delivery, publicUrl);
