import type { Db } from "../db";
import type { Page, Stage, WorkItem } from "../domain/types";
import { notFound } from "../errors";
import { queueTiers, selectQueueTier, selectWorkItem, selectWorkItemsPage } from "../sql/work-items";
import { decodeCursor, encodeCursor } from "./cursor";

export async function getWorkItem(db: Db, id: string): Promise<WorkItem> {
  const item = await selectWorkItem(db, id);
  if (!item) throw notFound("work item", id);
  return item;
}

export interface ListInput {
  stage?: Stage | Stage[];
  parentId?: string;
  search?: string;
  limit: number;
  cursor?: string;
}

/** All items, oldest first (created_at, id), keyset-paginated. */
export async function listWorkItems(db: Db, input: ListInput): Promise<Page<WorkItem>> {
  const stages = input.stage === undefined ? [] : Array.isArray(input.stage) ? input.stage : [input.stage];
  const rows = await selectWorkItemsPage(db, { stages, parentId: input.parentId, search: input.search, after: decodeCursor(input.cursor), limit: input.limit + 1 });
  const items = rows.slice(0, input.limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > input.limit && last ? encodeCursor(last.id) : null };
}

/**
 * Ready items in the exact order `workerId`'s next claim would take them (continuity
 * included). Without a worker, the order any worker without continuity would see.
 */
export async function queue(db: Db, workerId: string | null, limit: number): Promise<WorkItem[]> {
  const result: WorkItem[] = [];
  for (const tier of queueTiers(workerId ?? "")) {
    if (result.length >= limit) break;
    result.push(...(await selectQueueTier(db, tier, limit - result.length)));
  }
  return result;
}
