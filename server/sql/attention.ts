import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import type { AttentionKind } from "@work-graph/contract";
import { ATTENTION_COLUMNS, type LeaseRow, type toAttentionRequest } from "../domain/views";

export type AttentionRow = Parameters<typeof toAttentionRequest>[0];

/** Records a worker's question under its (fenced) lease. */
export async function insertAttentionRequest(
  tx: Tx,
  lease: LeaseRow,
  request: { kind: AttentionKind; question: string; context: string | null; options: string[]; blocking: boolean },
): Promise<AttentionRow> {
  const [row] = await tx.$queryRaw<AttentionRow[]>`
    INSERT INTO attention_requests AS a (work_item_id, lease_id, worker_id, kind, question, context, options, blocking)
    VALUES (${lease.workItemId}, ${lease.id}::uuid, ${lease.workerId}, ${request.kind}, ${request.question}, ${request.context},
            ${request.options}::text[], ${request.blocking})
    RETURNING ${ATTENTION_COLUMNS}`;
  return row!;
}

/** The work item attention request `id` is about, or undefined when there is no such request. */
export async function attentionItemOf(tx: Tx, id: string): Promise<string | undefined> {
  const [found] = await tx.$queryRaw<{ workItemId: string }[]>`
    SELECT work_item_id AS "workItemId" FROM attention_requests WHERE id = ${id}::uuid`;
  return found?.workItemId;
}

/** Resolves the request if it is still open (answered once); undefined when it was already resolved. */
export async function resolveIfOpen(
  tx: Tx, id: string, resolution: string, resolvedBy: string, resolvedByName: string | null,
): Promise<AttentionRow | undefined> {
  const [request] = await tx.$queryRaw<AttentionRow[]>`
    UPDATE attention_requests a SET status = 'resolved', resolution = ${resolution}, resolved_by = ${resolvedBy}, resolved_by_name = ${resolvedByName},
           resolved_at = work_graph_clock()
     WHERE id = ${id}::uuid AND status = 'open'
    RETURNING ${ATTENTION_COLUMNS}`;
  return request;
}

/**
 * One blocking request less on the item (rule 6 (blocking attention holds the item)); when it
 * was the last, its previous worker gets the continuity preference from now (rule 9 (continuity)).
 */
export async function releaseAttentionHold(tx: Tx, workItemId: string): Promise<void> {
  await tx.$executeRaw`
    UPDATE work_items SET blocking_attention_count = blocking_attention_count - 1,
           continuity_worker_id = CASE WHEN blocking_attention_count = 1 THEN previous_worker_id ELSE continuity_worker_id END,
           continuity_since = CASE WHEN blocking_attention_count = 1 THEN work_graph_clock() ELSE continuity_since END,
           updated_at = work_graph_clock()
     WHERE id = ${workItemId}`;
}

export async function findAttention(db: Db, id: string): Promise<AttentionRow | undefined> {
  const [row] = await db.$queryRaw<AttentionRow[]>`SELECT ${ATTENTION_COLUMNS} FROM attention_requests a WHERE a.id = ${id}::uuid`;
  return row;
}

/** Up to `limit` requests after request `after` (its id), oldest first. */
export async function selectAttention(
  db: Db,
  filter: { status?: "open" | "resolved"; workItemId?: string; after: string | null; limit: number; inProjects: Prisma.Sql },
): Promise<AttentionRow[]> {
  const conditions: Prisma.Sql[] = [Prisma.sql`EXISTS (SELECT 1 FROM work_items w WHERE w.id = a.work_item_id AND ${filter.inProjects})`];
  if (filter.status) conditions.push(Prisma.sql`a.status = ${filter.status}`);
  if (filter.workItemId) conditions.push(Prisma.sql`a.work_item_id = ${filter.workItemId}`);
  if (filter.after) conditions.push(Prisma.sql`(a.created_at, a.id) > (SELECT c.created_at, c.id FROM attention_requests c WHERE c.id::text = ${filter.after})`);
  return db.$queryRaw<AttentionRow[]>`
    SELECT ${ATTENTION_COLUMNS} FROM attention_requests a WHERE ${Prisma.join(conditions, " AND ")}
     ORDER BY a.created_at, a.id LIMIT ${filter.limit}`;
}

/** Which of the given requests are resolved (the attention waiters' check after a commit). */
export async function resolvedAttentionIds(db: Db, ids: string[]): Promise<{ id: string }[]> {
  return db.$queryRaw<{ id: string }[]>`
    SELECT id::text FROM attention_requests WHERE id = ANY(${ids}::uuid[]) AND status = 'resolved'`;
}

/** How long the oldest open request has waited, in seconds (0 when none is open), through the (status, created_at) index. */
export async function oldestOpenAttentionSeconds(db: Db): Promise<number> {
  const [oldest] = await db.$queryRaw<{ seconds: number }[]>`
    SELECT coalesce(extract(epoch FROM work_graph_now() - min(created_at)), 0)::float8 AS seconds
      FROM attention_requests WHERE status = 'open'`;
  return oldest!.seconds;
}
