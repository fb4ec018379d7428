import type { ActionsBlock, Button, KnownBlock, ModalView } from "@slack/types";
import type { SlackRequestRow } from "./statements";
import { itemUrl } from "../webhooks/payload";

/*
 * The Block Kit the Slack app sends: the question with a button per option and "Answer…",
 * the same message once answered (no buttons), and the modal "Answer…" opens.
 */

export const OPTION_ACTION = "work_graph_option";
export const OPEN_MODAL_ACTION = "work_graph_answer";
export const LINK_ACTION = "work_graph_open";
export const MODAL_CALLBACK = "work_graph_answer";
export const MODAL_BLOCK = "answer";
export const MODAL_INPUT = "text";

// Slack's limits: section text 3000, button label 75, button value 2000, actions block 25 elements, modal title 24.
const SECTION_CHARS = 2900;
const BUTTON_LABEL_CHARS = 75;
const MAX_OPTION_BUTTONS = 23;

// Slack "mrkdwn" reserves &, < and > (links and mentions are <…>).
export const slackEscape = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
/** Escaped first, then cut: escaping lengthens the text, and Slack's limits count what it receives. */
const mrkdwn = (text: string, max: number) => clip(slackEscape(text), max);

/** What an option button carries: the request and which of its options (the text stays in the database). */
export interface OptionValue {
  requestId: string;
  option: number;
}

/** Who answered, as Slack shows it: a Slack user as a mention (Slack renders the name), a person by name, anyone else by their actor. */
export function answererText(request: Pick<SlackRequestRow, "resolvedBy" | "resolvedByName">): string {
  if (!request.resolvedBy) return "someone";
  const slackUser = /^slack:([A-Z0-9]+)$/.exec(request.resolvedBy);
  if (slackUser) return `<@${slackUser[1]}>`;
  return slackEscape(request.resolvedByName ?? request.resolvedBy);
}

function heading(request: SlackRequestRow, publicUrl: string): string {
  const title = mrkdwn(request.itemTitle, 120).replaceAll("|", "¦");
  return `:raising_hand: *${slackEscape(request.workerId)}* asks about <${itemUrl(publicUrl, request.workItemId)}|${title}>${request.blocking ? " (blocking)" : ""}`;
}

function questionBlocks(request: SlackRequestRow, publicUrl: string): KnownBlock[] {
  const blocks: KnownBlock[] = [
    { type: "section", text: { type: "mrkdwn", text: heading(request, publicUrl) } },
    { type: "section", text: { type: "mrkdwn", text: `*${slackEscape(request.kind)}:* ${mrkdwn(request.question, SECTION_CHARS)}` } },
  ];
  if (request.context) blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: mrkdwn(request.context, SECTION_CHARS) }] });
  return blocks;
}

/** The fallback text (notifications, screen readers) of both forms of the message. */
const fallbackText = (request: SlackRequestRow) => slackEscape(`${request.workerId} asks about ${request.itemTitle}: ${clip(request.question, 200)}`);

/** The open request: question, context, a button per option, "Answer…" and a link to the item. */
export function questionMessage(request: SlackRequestRow, publicUrl: string): { text: string; blocks: KnownBlock[] } {
  const buttons: Button[] = request.options.slice(0, MAX_OPTION_BUTTONS).map((option, index) => ({
    type: "button",
    action_id: `${OPTION_ACTION}:${index}`,
    text: { type: "plain_text", text: clip(option, BUTTON_LABEL_CHARS) },
    value: JSON.stringify({ requestId: request.id, option: index } satisfies OptionValue),
  }));
  buttons.push(
    { type: "button", action_id: OPEN_MODAL_ACTION, style: "primary", text: { type: "plain_text", text: "Answer…" }, value: request.id },
    { type: "button", action_id: LINK_ACTION, text: { type: "plain_text", text: "Open in Work Graph" }, url: itemUrl(publicUrl, request.workItemId) },
  );
  const actions: ActionsBlock = { type: "actions", block_id: `work_graph:${request.id}`, elements: buttons };
  return { text: fallbackText(request), blocks: [...questionBlocks(request, publicUrl), actions] };
}

/** The answered request: the question, the answer and who gave it; no buttons. */
export function answeredMessage(request: SlackRequestRow, publicUrl: string): { text: string; blocks: KnownBlock[] } {
  const answer = mrkdwn(request.resolution ?? "", SECTION_CHARS);
  return {
    text: `${fallbackText(request)} — answered`,
    blocks: [
      ...questionBlocks(request, publicUrl),
      { type: "section", text: { type: "mrkdwn", text: `:white_check_mark: *Answered by ${answererText(request)}:* ${answer}` } },
    ],
  };
}

/** What the clicker of an already answered request is told (an ephemeral message). */
export function alreadyAnsweredText(request: SlackRequestRow): string {
  return `This request was already answered by ${answererText(request)}: “${mrkdwn(request.resolution ?? "", 500)}”. Your answer was not recorded.`;
}

/** Where a modal's answer goes: the request and the message it was opened from (for a reply there). */
export interface ModalMetadata {
  requestId: string;
  channel: string | null;
}

export function answerModal(request: SlackRequestRow, channel: string | null): ModalView {
  return {
    type: "modal",
    callback_id: MODAL_CALLBACK,
    private_metadata: JSON.stringify({ requestId: request.id, channel } satisfies ModalMetadata),
    title: { type: "plain_text", text: "Answer" },
    submit: { type: "plain_text", text: "Send answer" },
    close: { type: "plain_text", text: "Cancel" },
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: mrkdwn(request.question, SECTION_CHARS) } },
      {
        type: "input",
        block_id: MODAL_BLOCK,
        label: { type: "plain_text", text: "Your answer" },
        element: { type: "plain_text_input", action_id: MODAL_INPUT, multiline: true, max_length: 3000 },
      },
    ],
  };
}
