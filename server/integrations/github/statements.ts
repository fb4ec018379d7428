import type { Db } from "../../db";
import type { Tx } from "../../database/transaction";

/*
 * GitHub issues in, progress out: the deliveries handled, the items of issues, and the `github`
 * webhook of the outbox with the comments its deliveries posted.
 */

/** Whether delivery `deliveryId` (X-GitHub-Delivery) was handled already. */
export async function githubDeliverySeen(db: Db, deliveryId: string): Promise<boolean> {
  const [row] = await db.$queryRaw<{ seen: boolean }[]>`
    SELECT true AS seen FROM github_deliveries WHERE delivery_id = ${deliveryId}`;
  return row !== undefined;
}

/** GitHub redelivers a delivery for 3 days; its id is kept a while longer, then deleted by the sweep's cleanup (sweepOldGithubDeliveries). */
const GITHUB_DELIVERY_DAYS = 7;

/** Deletes up to `batch` delivery ids older than GITHUB_DELIVERY_DAYS; returns how many. */
export async function deleteOldGithubDeliveries(tx: Tx, batch: number): Promise<number> {
  return tx.$executeRaw`
    WITH doomed AS MATERIALIZED (
      SELECT delivery_id FROM github_deliveries
       WHERE received_at < work_graph_clock() - make_interval(days => ${GITHUB_DELIVERY_DAYS})
       ORDER BY received_at LIMIT ${batch} FOR UPDATE SKIP LOCKED
    )
    DELETE FROM github_deliveries d USING doomed WHERE d.delivery_id = doomed.delivery_id`;
}

/** Records delivery `deliveryId` as handled; false when another request recorded it first. */
export async function recordGithubDelivery(db: Db, delivery: { id: string; event: string; action: string | null }): Promise<boolean> {
  const inserted = await db.$executeRaw`
    INSERT INTO github_deliveries (delivery_id, event, action) VALUES (${delivery.id}, ${delivery.event}, ${delivery.action})
    ON CONFLICT (delivery_id) DO NOTHING`;
  return inserted === 1;
}

/** The item of an issue (its externalId in the project), if it exists. */
export async function selectItemIdByExternalId(db: Db | Tx, projectId: string, externalId: string): Promise<string | undefined> {
  const [row] = await db.$queryRaw<{ id: string }[]>`
    SELECT id FROM work_items WHERE project_id = ${projectId} AND external_id = ${externalId}`;
  return row?.id;
}

/**
 * Creates (or updates) the one `github` webhook whose outbox deliveries write the comments; its
 * signing secret is never used (nothing is signed for GitHub's REST API). Returns its id.
 */
export async function upsertGithubWebhook(db: Db, webhook: { url: string; events: string[]; secretCiphertext: string }): Promise<string> {
  const [row] = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO webhooks (url, events, format, label, secret_ciphertext)
    VALUES (${webhook.url}, ${webhook.events}::text[], 'github', 'GitHub issues', ${webhook.secretCiphertext})
    ON CONFLICT (format) WHERE format = 'github' AND deleted_at IS NULL
    DO UPDATE SET url = EXCLUDED.url, events = EXCLUDED.events
    RETURNING id::text`;
  return row!.id;
}

/** What a progress comment needs about an item and its lease's worker. */
export interface GithubItemRow {
  externalId: string | null;
  title: string;
}

export async function selectGithubItem(db: Db, workItemId: string): Promise<GithubItemRow | undefined> {
  const [row] = await db.$queryRaw<GithubItemRow[]>`
    SELECT external_id AS "externalId", title FROM work_items WHERE id = ${workItemId}`;
  return row;
}

/** An attention request's question and answer, for its comments. */
export async function selectAttentionForGithub(db: Db, requestId: string): Promise<{ question: string; resolution: string | null; resolvedBy: string | null } | undefined> {
  const [row] = await db.$queryRaw<{ question: string; resolution: string | null; resolvedBy: string | null }[]>`
    SELECT question, resolution, resolved_by AS "resolvedBy" FROM attention_requests WHERE id = ${requestId}::uuid`;
  return row;
}

/** A note under item `workItemId`'s live lease (its worker reads it with the item), with its `note.added` event. */
export async function insertNoteUnderCurrentLease(tx: Tx, workItemId: string, content: string): Promise<void> {
  await tx.$executeRaw`
    WITH n AS (
      INSERT INTO notes (work_item_id, lease_id, epoch, worker_id, content)
      SELECT w.id, l.id, l.epoch, l.worker_id, ${content}
        FROM work_items w JOIN leases l ON l.id = w.current_lease_id
       WHERE w.id = ${workItemId}
      RETURNING *
    )
    INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
    SELECT n.work_item_id, 'note.added', n.worker_id, n.lease_id, n.epoch, jsonb_build_object('noteId', n.id) FROM n`;
}

/** The comment already posted for outbox delivery `deliveryId`, if any. */
export async function selectGithubComment(db: Db, deliveryId: string): Promise<bigint | undefined> {
  const [row] = await db.$queryRaw<{ commentId: bigint }[]>`
    SELECT comment_id AS "commentId" FROM github_comments WHERE delivery_id = ${deliveryId}::uuid`;
  return row?.commentId;
}

export async function insertGithubComment(db: Db, deliveryId: string, commentId: number): Promise<void> {
  await db.$executeRaw`
    INSERT INTO github_comments (delivery_id, comment_id) VALUES (${deliveryId}::uuid, ${commentId})
    ON CONFLICT (delivery_id) DO NOTHING`;
}
