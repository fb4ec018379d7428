import type { Db } from "../../db";
import type { Caller } from "../../domain/types";
import type { SlackResponder } from "./client";
import { selectEnabledPersonByEmail } from "../../sql/people";
import { resolveAttention } from "../../operations/attention";

/**
 * The Slack app acts as an operator (operators answer attention requests) in the name of the
 * Slack user: the known person with the Slack profile's email (`person:<email>`), else
 * `slack:<user id>` with the Slack profile's name.
 */
async function slackCaller(db: Db, responder: SlackResponder): Promise<Caller> {
  const caller: Caller = { tokenId: "slack-app", role: "operator", workerId: null, actor: responder.actor, projects: [], capabilities: [], displayName: responder.name };
  const person = responder.email ? await selectEnabledPersonByEmail(db, responder.email) : undefined;
  return person ? { ...caller, actor: person.actor, person: { id: person.id, name: person.name }, displayName: null } : caller;
}

/**
 * Resolves an attention request with an answer given in Slack, once per interaction
 * (`interactionKey`: Slack sending the same interaction again returns the first result).
 * ALREADY_RESOLVED when someone answered first.
 */
export async function answerFromSlack(db: Db, responder: SlackResponder, input: { requestId: string; resolution: string; interactionKey: string }) {
  return resolveAttention(db, await slackCaller(db, responder), { id: input.requestId, resolution: input.resolution, idempotencyKey: input.interactionKey });
}
