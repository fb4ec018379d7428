import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import { continuitySeconds } from "../config";
import { CLAIMABLE, claimTiers, STAGE_SQL } from "../domain/readiness";
import type { Page, Stage, WorkItem } from "../domain/types";
import { selectWorkItem, selectWorkItems } from "../domain/views";
import { notFound } from "../errors";
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
  const conditions: Prisma.Sql[] = [Prisma.sql`TRUE`];
  const stages = input.stage === undefined ? [] : Array.isArray(input.stage) ? input.stage : [input.stage];
  if (stages.length > 0) conditions.push(Prisma.sql`(${STAGE_SQL}) = ANY(${stages}::text[])`);
  if (input.parentId !== undefined) conditions.push(Prisma.sql`w.parent_id = ${input.parentId}`);
  if (input.search) {
    const pattern = `%${input.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conditions.push(Prisma.sql`(w.id ILIKE ${pattern} OR w.title ILIKE ${pattern})`);
  }
  const after = decodeCursor(input.cursor);
  if (after) conditions.push(Prisma.sql`(w.created_at, w.id) > (SELECT c.created_at, c.id FROM work_items c WHERE c.id = ${after})`);
  const rows = await selectWorkItems(db, Prisma.join(conditions, " AND "), Prisma.sql`w.created_at, w.id`, input.limit + 1);
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
  for (const tier of claimTiers(workerId ?? "", continuitySeconds())) {
    if (result.length >= limit) break;
    result.push(...(await selectWorkItems(db, Prisma.sql`${CLAIMABLE} ${tier}`, undefined, limit - result.length)));
  }
  return result;
}
