import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import type { AttentionRequest, Page } from "../domain/types";
import { ATTENTION_COLUMNS, toAttentionRequest } from "../domain/views";
import { notFound } from "../errors";
import { decodeCursor, encodeCursor } from "./cursor";
import { wakeups } from "../realtime/wakeups";

type AttentionRow = Parameters<typeof toAttentionRequest>[0];

export async function getAttention(db: Db, id: string): Promise<AttentionRequest> {
  const [row] = await db.$queryRaw<AttentionRow[]>`SELECT ${ATTENTION_COLUMNS} FROM attention_requests a WHERE a.id = ${id}::uuid`;
  if (!row) throw notFound("attention request", id);
  return toAttentionRequest(row);
}

/** Oldest first (open requests: the longest-waiting human question first). */
export async function listAttention(
  db: Db,
  input: { status?: "open" | "resolved"; workItemId?: string; limit: number; cursor?: string },
): Promise<Page<AttentionRequest>> {
  const conditions: Prisma.Sql[] = [Prisma.sql`TRUE`];
  if (input.status) conditions.push(Prisma.sql`a.status = ${input.status}`);
  if (input.workItemId) conditions.push(Prisma.sql`a.work_item_id = ${input.workItemId}`);
  const after = decodeCursor(input.cursor);
  if (after) conditions.push(Prisma.sql`(a.created_at, a.id) > (SELECT c.created_at, c.id FROM attention_requests c WHERE c.id::text = ${after})`);
  const rows = await db.$queryRaw<AttentionRow[]>`
    SELECT ${ATTENTION_COLUMNS} FROM attention_requests a WHERE ${Prisma.join(conditions, " AND ")}
     ORDER BY a.created_at, a.id LIMIT ${input.limit + 1}`;
  const items = rows.slice(0, input.limit).map(toAttentionRequest);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > input.limit && last ? encodeCursor(last.id) : null };
}

/** attention.wait: the request as soon as it is resolved (woken on commit), or as it is when the time is up. */
export async function waitForAttention(db: Db, id: string, timeoutSeconds: number, signal?: AbortSignal): Promise<AttentionRequest> {
  const current = await getAttention(db, id);
  if (current.status === "resolved") return current;
  await wakeups(db).attentionResolved(id, timeoutSeconds * 1000, signal);
  return getAttention(db, id);
}
