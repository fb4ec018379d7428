import type { Db } from "../db";
import type { Caller } from "../domain/types";
import type { SlackResponder } from "../slack/client";
import { resolveAttention } from "./attention";

/** The Slack app acts as an operator (operators answer attention requests) in the name of the Slack user. */
function slackCaller(responder: SlackResponder): Caller {
  return { tokenId: "slack-app", role: "operator", workerId: null, actor: responder.actor, projects: [], capabilities: [] };
}

/**
 * Resolves an attention request with an answer given in Slack, once per interaction
 * (`interactionKey`: Slack sending the same interaction again returns the first result).
 * ALREADY_RESOLVED when someone answered first.
 */
export function answerFromSlack(db: Db, responder: SlackResponder, input: { requestId: string; resolution: string; interactionKey: string }) {
  return resolveAttention(db, slackCaller(responder), { id: input.requestId, resolution: input.resolution, idempotencyKey: input.interactionKey });
}
