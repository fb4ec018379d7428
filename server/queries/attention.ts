import type { Db } from "../db";
import type { AttentionRequest, Page } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toAttentionRequest } from "../domain/views";
import { notFound } from "../errors";
import { findAttention, selectAttention } from "../sql/attention";
import { decodeCursor, encodeCursor } from "./cursor";
import { wakeups } from "../realtime/wakeups";
import { inProjects } from "../domain/scope";
import { refuseAttentionOutsideScope } from "../sql/visibility";

export async function getAttention(db: Db, caller: Pick<Caller, "projects">, id: string): Promise<AttentionRequest> {
  await refuseAttentionOutsideScope(db, caller, id);
  const row = await findAttention(db, id);
  if (!row) throw notFound("attention request", id);
  return toAttentionRequest(row);
}

/** Oldest first (open requests: the longest-waiting human question first). */
export async function listAttention(
  db: Db,
  caller: Pick<Caller, "projects">,
  input: { status?: "open" | "resolved"; workItemId?: string; limit: number; cursor?: string; projectId?: string },
): Promise<Page<AttentionRequest>> {
  const rows = await selectAttention(db, {
    status: input.status, workItemId: input.workItemId, after: decodeCursor(input.cursor), limit: input.limit + 1,
    inProjects: inProjects(caller, input.projectId),
  });
  const items = rows.slice(0, input.limit).map(toAttentionRequest);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > input.limit && last ? encodeCursor(last.id) : null };
}

/** attention.wait: the request as soon as it is resolved (woken on commit), or as it is when the time is up. */
export async function waitForAttention(
  db: Db,
  caller: Pick<Caller, "projects">,
  id: string,
  timeoutSeconds: number,
  signal?: AbortSignal,
): Promise<AttentionRequest> {
  const current = await getAttention(db, caller, id);
  if (current.status === "resolved") return current;
  await wakeups(db).attentionResolved(id, timeoutSeconds * 1000, signal);
  return getAttention(db, caller, id);
}
