import type { Db } from "../db";
import { inProjects } from "../domain/scope";
import type { Caller, Page, Stage, WorkItem } from "../domain/types";
import { notFound } from "../errors";
import { queueTiers, selectQueueTier, selectVisibleWorkItem, selectWorkItemsPage } from "../sql/work-items";
import { decodeCursor, encodeCursor } from "./cursor";

/** Rule 12 (projects scope tokens): an item in another project is NOT_FOUND, exactly like a missing one. */
export async function getWorkItem(db: Db, caller: Pick<Caller, "projects">, id: string): Promise<WorkItem> {
  const item = await selectVisibleWorkItem(db, caller, id);
  if (!item) throw notFound("work item", id);
  return item;
}

export interface ListInput {
  stage?: Stage | Stage[];
  parentId?: string;
  search?: string;
  limit: number;
  cursor?: string;
  projectId?: string;
  externalId?: string;
}

/** The items the caller may see, oldest first (created_at, id), keyset-paginated. */
export async function listWorkItems(db: Db, caller: Pick<Caller, "projects">, input: ListInput): Promise<Page<WorkItem>> {
  const stages = input.stage === undefined ? [] : Array.isArray(input.stage) ? input.stage : [input.stage];
  const rows = await selectWorkItemsPage(db, {
    stages, parentId: input.parentId, search: input.search, after: decodeCursor(input.cursor), limit: input.limit + 1,
    projects: inProjects(caller, input.projectId), externalId: input.externalId,
  });
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
