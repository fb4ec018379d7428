import { z } from "zod";
import { maxBodyBytes, slackSettings } from "../../config";
import type { Db } from "../../db";
import { WorkGraphError } from "../../errors";
import { logger } from "../../log";
import { answerFromSlack } from "./operations";
import { databaseUnixSeconds, selectRequestForSlack, selectSlackMessage } from "./statements";
import { failureResponse } from "../../http/unavailable";
import { safeString } from "@work-graph/contract";
import { slackApp, slackResponder, type SlackApp } from "./client";
import {
  alreadyAnsweredText,
  answerModal,
  MODAL_BLOCK,
  MODAL_CALLBACK,
  MODAL_INPUT,
  OPEN_MODAL_ACTION,
  OPTION_ACTION,
  type ModalMetadata,
  type OptionValue,
} from "./messages";
import { slackSignatureIsValid } from "./signature";

export const SLACK_INTERACTIONS_PATH = "/api/integrations/slack/interactions";

const id = z.string().min(1).max(100);
const user = z.object({ id: z.string().regex(/^[A-Z0-9]{1,40}$/), name: z.string().max(200).optional(), username: z.string().max(200).optional() });

const blockActions = z.object({
  type: z.literal("block_actions"),
  user,
  trigger_id: id.optional(),
  channel: z.object({ id }).optional(),
  actions: z.array(z.object({ action_id: z.string().max(255), action_ts: z.string().max(40), value: safeString().max(2000).optional() })).min(1).max(25),
});

const viewSubmission = z.object({
  type: z.literal("view_submission"),
  user,
  view: z.object({
    id,
    callback_id: z.string().max(255),
    private_metadata: z.string().max(3000),
    state: z.object({ values: z.record(z.string(), z.record(z.string(), z.object({ value: safeString().max(100_000).nullish() }))) }),
  }),
});

const interaction = z.discriminatedUnion("type", [blockActions, viewSubmission]);
type Interaction = z.infer<typeof interaction>;

const optionValue = z.object({ requestId: z.uuid(), option: z.number().int().min(0).max(100) }) satisfies z.ZodType<OptionValue>;
const modalMetadata = z.object({ requestId: z.uuid(), channel: id.nullable() }) satisfies z.ZodType<ModalMetadata>;

const refuse = (status: number, reason: string, message: string) =>
  Response.json({ reason, message }, { status, headers: { "cache-control": "no-store" } });

/** The acknowledgement and the work that follows it (run after the acknowledgement has been sent). */
export interface SlackInteractionAnswer {
  response: Response;
  afterwards: (() => Promise<void>) | null;
}

/** A person in Slack answers a request: recorded once; someone who answers after the first is told who did. */
async function answer(db: Db, app: SlackApp, input: { user: Interaction["user"]; requestId: string; resolution: string; interactionKey: string; channel: string | null }) {
  const responder = await slackResponder(app.client, { id: input.user.id, name: input.user.name ?? input.user.username });
  try {
    await answerFromSlack(db, responder, input);
  } catch (error) {
    if (!(error instanceof WorkGraphError)) throw error;
    const channel = input.channel ?? (await selectSlackMessage(db, input.requestId))?.channel;
    if (!channel) return;
    const request = await selectRequestForSlack(db, input.requestId);
    const text = error.reason === "ALREADY_RESOLVED" && request
      ? alreadyAnsweredText(request)
      : `Work Graph did not record your answer: ${error.message}`;
    await app.client.chat.postEphemeral({ channel, user: input.user.id, text });
  }
}

async function onBlockActions(db: Db, app: SlackApp, payload: z.infer<typeof blockActions>) {
  const channel = payload.channel?.id ?? null;
  for (const action of payload.actions) {
    if (action.action_id.startsWith(`${OPTION_ACTION}:`)) {
      const chosen = optionValue.safeParse(safeJson(action.value));
      if (!chosen.success) continue;
      const request = await selectRequestForSlack(db, chosen.data.requestId);
      const option = request?.options[chosen.data.option];
      if (option === undefined) continue;
      await answer(db, app, { user: payload.user, requestId: chosen.data.requestId, resolution: option, interactionKey: `slack:${payload.user.id}:${action.action_ts}`, channel });
    } else if (action.action_id === OPEN_MODAL_ACTION && payload.trigger_id) {
      const request = z.uuid().safeParse(action.value).success ? await selectRequestForSlack(db, action.value!) : undefined;
      if (!request) continue;
      if (request.status !== "open") {
        if (channel) await app.client.chat.postEphemeral({ channel, user: payload.user.id, text: alreadyAnsweredText(request) });
        continue;
      }
      // Slack's trigger_id is good for 3 s: this runs right after the acknowledgement.
      await app.client.views.open({ trigger_id: payload.trigger_id, view: answerModal(request, channel) });
    }
  }
}

async function onViewSubmission(db: Db, app: SlackApp, payload: z.infer<typeof viewSubmission>) {
  if (payload.view.callback_id !== MODAL_CALLBACK) return;
  const metadata = modalMetadata.safeParse(safeJson(payload.view.private_metadata));
  const text = payload.view.state.values[MODAL_BLOCK]?.[MODAL_INPUT]?.value?.trim();
  if (!metadata.success || !text) return;
  await answer(db, app, { user: payload.user, requestId: metadata.data.requestId, resolution: text, interactionKey: `slack:${payload.user.id}:${payload.view.id}`, channel: metadata.data.channel });
}

function safeJson(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * `POST /api/integrations/slack/interactions` (API.md v3 "Answering from Slack"): Slack's
 * signature is checked first (401 and nothing done otherwise), then the interaction is
 * acknowledged at once (an empty 200, which also closes a submitted modal) and handled
 * afterwards, so the answer is within Slack's 3 s whatever the database and Slack's API take.
 * Slack sending an interaction again (X-Slack-Retry-Num) repeats nothing: an answer is keyed by
 * the interaction (the action's timestamp, or the modal's view id).
 */
export async function handleSlackInteraction(
  db: Db,
  request: { headers: { get(name: string): string | null }; readBody: (limit: number) => Promise<Buffer | null> },
): Promise<SlackInteractionAnswer> {
  const settings = slackSettings();
  if (!settings) return { response: refuse(404, "NOT_FOUND", "the Slack app is not configured on this server"), afterwards: null };
  try {
    const body = await request.readBody(maxBodyBytes());
    if (body === null) return { response: refuse(413, "TOO_LARGE", "the request body is over the size limit"), afterwards: null };
    const signed = slackSignatureIsValid(
      settings.signingSecret,
      { timestamp: request.headers.get("x-slack-request-timestamp"), signature: request.headers.get("x-slack-signature") },
      body,
      await databaseUnixSeconds(db),
    );
    if (!signed) return { response: refuse(401, "UNAUTHENTICATED", "missing, wrong or expired Slack signature"), afterwards: null };
    const parsed = interaction.safeParse(safeJson(new URLSearchParams(body.toString("utf8")).get("payload") ?? undefined));
    // Slack sends other kinds too (view_closed, shortcuts…): acknowledged, nothing to do.
    if (!parsed.success) return { response: new Response(null, { status: 200 }), afterwards: null };
    const app = slackApp(settings);
    const payload = parsed.data;
    const afterwards = async () => {
      try {
        if (payload.type === "block_actions") await onBlockActions(db, app, payload);
        else await onViewSubmission(db, app, payload);
      } catch (error) {
        logger().error({ err: error, route: SLACK_INTERACTIONS_PATH }, "Slack interaction failed");
      }
    };
    return { response: new Response(null, { status: 200 }), afterwards };
  } catch (error) {
    return { response: failureResponse(error, SLACK_INTERACTIONS_PATH), afterwards: null };
  }
}
