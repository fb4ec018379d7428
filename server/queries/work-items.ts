import { continuitySeconds } from "../config";
import type { Db } from "../db";
import { inProjects } from "../domain/scope";
import type { Page, Stage, WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { notFound } from "../errors";
import { agentCapabilities, type Routing } from "../domain/routing";
import { selectRoutedQueueTier, workerCapabilities } from "../sql/claims";
import { queueTiers, selectVisibleWorkItem, selectWorkItemsPage } from "../sql/work-items";
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

async function queueCapabilities(db: Db, caller: Pick<Caller, "role" | "workerId" | "capabilities">, input: QueueInput): Promise<string[] | null> {
  const requested = agentCapabilities(caller, input.capabilities);
  if (requested !== undefined || input.workerId === null) return requested ?? null;
  return workerCapabilities(db, input.workerId);
}

export interface QueueInput {
  workerId: string | null;
  limit: number;
  projectId?: string;
  capabilities?: string[];
}

/**
 * Ready items in the exact order `workerId`'s next claim would take them (continuity
 * included), through the claim's own routing (rules 12–15): the caller's project scope and
 * `projectId`, the capabilities (an agent's: its token's by default, a subset of them; for
 * someone else's worker: that worker's agent tokens'; for nobody: no filter), time gates and
 * full keys. Without a worker, the order any worker without continuity would see.
 */
export async function queue(db: Db, caller: Pick<Caller, "role" | "workerId" | "projects" | "capabilities">, input: QueueInput): Promise<WorkItem[]> {
  const routing: Routing = { projects: caller.projects, projectId: input.projectId, capabilities: await queueCapabilities(db, caller, input) };
  const result: WorkItem[] = [];
  for (const tier of queueTiers(input.workerId ?? "", continuitySeconds())) {
    if (result.length >= input.limit) break;
    result.push(...(await selectRoutedQueueTier(db, tier, routing, input.limit - result.length)));
  }
  return result;
}
