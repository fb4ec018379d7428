import type { Db } from "../../db";
import { ATTENTION_COLUMNS } from "../../domain/views";
import type { AttentionRow } from "../../sql/attention";

/*
 * The Slack app (server/integrations/slack): its outbox webhook, where it posted each attention request,
 * and the reads its messages are built from.
 */

/** Creates the one live `slack_app` webhook, or brings it up to date; its id. */
export async function upsertSlackAppWebhook(
  db: Db,
  webhook: { url: string; label: string; events: string[]; secretCiphertext: string },
): Promise<string> {
  const [row] = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO webhooks (url, events, format, label, secret_ciphertext)
    VALUES (${webhook.url}, ${webhook.events}::text[], 'slack_app', ${webhook.label}, ${webhook.secretCiphertext})
    ON CONFLICT (format) WHERE format = 'slack_app' AND deleted_at IS NULL
    DO UPDATE SET url = EXCLUDED.url, label = EXCLUDED.label, events = EXCLUDED.events
    RETURNING id::text`;
  return row!.id;
}

/** An attention request with its item's title, as a Slack message shows it. */
export type SlackRequestRow = AttentionRow & { itemTitle: string; projectId: string };

export async function selectRequestForSlack(db: Db, requestId: string): Promise<SlackRequestRow | undefined> {
  const [row] = await db.$queryRaw<SlackRequestRow[]>`
    SELECT ${ATTENTION_COLUMNS}, w.title AS "itemTitle", w.project_id AS "projectId"
      FROM attention_requests a JOIN work_items w ON w.id = a.work_item_id
     WHERE a.id = ${requestId}::uuid`;
  return row;
}

export interface SlackMessageRow {
  channel: string;
  ts: string;
}

export async function selectSlackMessage(db: Db, requestId: string): Promise<SlackMessageRow | undefined> {
  const [row] = await db.$queryRaw<SlackMessageRow[]>`
    SELECT channel, ts FROM slack_messages WHERE attention_request_id = ${requestId}::uuid`;
  return row;
}

export async function insertSlackMessage(db: Db, requestId: string, message: SlackMessageRow): Promise<void> {
  await db.$executeRaw`
    INSERT INTO slack_messages (attention_request_id, channel, ts) VALUES (${requestId}::uuid, ${message.channel}, ${message.ts})
    ON CONFLICT (attention_request_id) DO NOTHING`;
}

/** Whether webhook `webhookId` still has to post request `requestId` (its `attention.requested` delivery is pending). */
export async function postIsPending(db: Db, webhookId: string, requestId: string): Promise<boolean> {
  const [row] = await db.$queryRaw<{ pending: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM webhook_deliveries d JOIN events e ON e.sequence = d.event_sequence
       WHERE d.webhook_id = ${webhookId}::uuid AND d.status = 'pending' AND d.event_type = 'attention.requested'
         AND e.type = 'attention.requested' AND e.data->>'requestId' = ${requestId}
    ) AS pending`;
  return row!.pending;
}

/** The database clock in unix seconds (Slack's signature window is judged by it). */
export async function databaseUnixSeconds(db: Db): Promise<number> {
  const [row] = await db.$queryRaw<{ seconds: number }[]>`SELECT floor(extract(epoch FROM work_graph_clock()))::int AS seconds`;
  return row!.seconds;
}
