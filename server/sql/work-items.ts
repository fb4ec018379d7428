import { Prisma } from "../generated/prisma/client";
import type { Tx } from "../database/transaction";
import { generateWorkItemId } from "../domain/ids";
import { claimTiers, QUEUE_ORDER, STAGE_SQL } from "../domain/readiness";
import { inCallerScope } from "../domain/scope";
import type { Stage, WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toWorkItem, WORK_ITEM_COLUMNS, type WorkItemRow } from "../domain/views";
import { DEFAULT_PROJECT } from "@work-graph/contract";
import { notFound, WorkGraphError } from "../errors";
import { appendEvents } from "./events";
import { lockAncestorChain, waitsForReaches } from "./graph";

const WORK_ITEM_SELECT = Prisma.sql`SELECT ${WORK_ITEM_COLUMNS} FROM work_items w`;

/** Work items matching `where` (a fragment over alias `w`), in `orderBy` order (rule 10 (queue order) unless given). */
export async function selectWorkItems(tx: Tx, where: Prisma.Sql, orderBy: Prisma.Sql = QUEUE_ORDER, limit?: number): Promise<WorkItem[]> {
  const rows = await tx.$queryRaw<WorkItemRow[]>`${WORK_ITEM_SELECT} WHERE ${where} ORDER BY ${orderBy}
    ${limit === undefined ? Prisma.empty : Prisma.sql`LIMIT ${limit}`}`;
  return rows.map(toWorkItem);
}

export async function selectWorkItem(tx: Tx, id: string): Promise<WorkItem | null> {
  const [item] = await selectWorkItems(tx, Prisma.sql`w.id = ${id}`);
  return item ?? null;
}

/** Item `id` when the caller may see it (rule 12 (projects scope tokens)): null when it is missing or in another project. */
export async function selectVisibleWorkItem(tx: Tx, scope: Pick<Caller, "projects">, id: string): Promise<WorkItem | null> {
  const [item] = await selectWorkItems(tx, Prisma.sql`w.id = ${id} AND ${inCallerScope(scope)}`);
  return item ?? null;
}

/** The given items in the given order. */
export const selectWorkItemsById = (tx: Tx, ids: string[]): Promise<WorkItem[]> =>
  selectWorkItems(tx, Prisma.sql`w.id = ANY(${ids}::text[])`, Prisma.sql`array_position(${ids}::text[], w.id)`);

export interface NewWorkItem {
  id?: string;
  title: string;
  description?: string | null;
  priority?: number;
  dependsOn?: string[];
  requires?: string[];
  concurrencyKey?: string | null;
  notBefore?: string | null;
  delaySeconds?: number;
  externalId?: string | null;
}

/** Where new items go: the project asked for (children are always in their parent's) and the projects the creator may see. */
export interface Placement {
  projectId?: string;
  /** Rule 12 (projects scope tokens): the creator's scope, [] = every project. */
  scope: string[];
}

/**
 * Inserts items (all under `parentId`, or roots in `placement.projectId`) with their dependency
 * edges and readiness counters, and rejects any that would close a cycle. `dependsOn` may name
 * items inserted in the same call. Children inherit the parent's project, `requires` and
 * concurrency key unless given. The caller holds lockGraphShape when any item has a parent or
 * dependencies.
 */
export async function insertWorkItems(
  tx: Tx,
  parentId: string | null,
  items: NewWorkItem[],
  actor: string,
  placement: Placement,
): Promise<string[]> {
  let inherited = 0;
  let parentPriority = 0;
  let projectId = placement.projectId ?? DEFAULT_PROJECT;
  let inheritedRequires: string[] = [];
  let inheritedKey: string | null = null;
  const visible = (project: string) => placement.scope.length === 0 || placement.scope.includes(project);
  const declared = [...new Set(items.flatMap((item) => item.dependsOn ?? []))];
  if (parentId !== null) {
    // The parent chain and the blockers in one statement, in id order (the global lock order).
    const parent = await lockAncestorChain(tx, parentId, declared);
    if (!parent || !visible(parent.projectId)) throw notFound("parent work item", parentId);
    if (placement.projectId !== undefined && placement.projectId !== parent.projectId) {
      throw new WorkGraphError("VALIDATION", `a child is in its parent's project (${parent.projectId}), not ${placement.projectId}`, {
        projectId: placement.projectId, parentProjectId: parent.projectId,
      });
    }
    if (parent.status !== "open") {
      throw new WorkGraphError("ALREADY_TERMINAL", `parent ${parentId} is already ${parent.status}`, { workItemId: parentId, status: parent.status });
    }
    inherited = parent.inherited;
    parentPriority = parent.priority;
    projectId = parent.projectId;
    inheritedRequires = parent.requires;
    inheritedKey = parent.concurrencyKey;
  } else {
    if (!visible(projectId)) throw new WorkGraphError("FORBIDDEN", `this token may not create items in project ${projectId}`, { projectId });
    // "default" always exists: the common create costs no lookup.
    if (projectId !== DEFAULT_PROJECT && !(await projectExists(tx, projectId))) throw notFound("project", projectId);
  }

  const gated = items.find((item) => item.notBefore != null && item.delaySeconds !== undefined);
  if (gated) throw new WorkGraphError("VALIDATION", "give notBefore or delaySeconds, not both", { id: gated.id ?? null });
  const rows = items.map((item) => ({
    id: item.id ?? generateWorkItemId(item.title),
    title: item.title,
    description: item.description ?? null,
    priority: item.priority ?? parentPriority,
    dependsOn: [...new Set(item.dependsOn ?? [])],
    requires: item.requires === undefined ? inheritedRequires : [...new Set(item.requires)].sort(),
    concurrencyKey: item.concurrencyKey === undefined ? inheritedKey : item.concurrencyKey,
    notBefore: item.notBefore ?? null,
    delaySeconds: item.delaySeconds ?? null,
    externalId: item.externalId ?? null,
  }));
  const ids = rows.map((row) => row.id);
  const duplicateInCall = ids.find((id, index) => ids.indexOf(id) !== index);
  if (duplicateInCall) throw new WorkGraphError("DUPLICATE", `work item id ${duplicateInCall} is given twice`, { id: duplicateInCall });
  const selfDependent = rows.find((row) => row.dependsOn.includes(row.id));
  if (selfDependent) throw new WorkGraphError("DEPENDENCY_CYCLE", `work item ${selfDependent.id} cannot depend on itself`, { workItemId: selfDependent.id });

  // Blockers outside this call: they must exist; share-locked so a concurrent release of one
  // either commits before we count it as open or waits until our edge is visible to it.
  const external = [...new Set(rows.flatMap((row) => row.dependsOn))].filter((id) => !ids.includes(id));
  const blockers = external.length === 0 ? [] : await tx.$queryRaw<{ id: string; open: boolean; projectId: string }[]>`
    SELECT id, status = 'open' AS open, project_id AS "projectId" FROM work_items WHERE id = ANY(${external}::text[]) ORDER BY id FOR SHARE`;
  const missing = external.find((id) => !blockers.some((blocker) => blocker.id === id && visible(blocker.projectId)));
  if (missing) throw notFound("dependency", missing);
  const openBlocker = new Set(blockers.filter((blocker) => blocker.open).map((blocker) => blocker.id).concat(ids));

  const externalIds = rows.flatMap((row) => (row.externalId === null ? [] : [row.externalId]));
  const externalTwice = externalIds.find((id, index) => externalIds.indexOf(id) !== index);
  if (externalTwice) throw new WorkGraphError("DUPLICATE", `externalId ${externalTwice} is given twice`, { externalId: externalTwice });

  // No conflict target: a taken id and a taken (project, external id) both insert nothing.
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO work_items (id, title, description, parent_id, priority, open_dependency_count, ancestor_dependency_count,
                            project_id, requires, concurrency_key, not_before, external_id)
    SELECT i.id, i.title, i.description, i.parent_id, i.priority, i.open_dependencies, i.inherited, ${projectId},
           ARRAY(SELECT jsonb_array_elements_text(i.requires)), i.concurrency_key,
           CASE WHEN i.delay IS NOT NULL THEN work_graph_now() + make_interval(secs => i.delay) ELSE i.not_before::timestamptz END,
           i.external_id
      FROM unnest(${ids}::text[], ${rows.map((r) => r.title)}::text[], ${rows.map((r) => r.description)}::text[],
                  ${rows.map(() => parentId)}::text[], ${rows.map((r) => r.priority)}::int[],
                  ${rows.map((r) => r.dependsOn.filter((id) => openBlocker.has(id)).length)}::int[],
                  ${rows.map(() => inherited)}::int[], ${rows.map((r) => JSON.stringify(r.requires))}::jsonb[],
                  ${rows.map((r) => r.concurrencyKey)}::text[], ${rows.map((r) => r.notBefore)}::text[],
                  ${rows.map((r) => r.delaySeconds)}::int[], ${rows.map((r) => r.externalId)}::text[])
           AS i(id, title, description, parent_id, priority, open_dependencies, inherited, requires, concurrency_key, not_before, delay, external_id)
    ON CONFLICT DO NOTHING
    RETURNING id`;
  if (inserted.length !== rows.length) {
    const row = rows.find((candidate) => !inserted.some((done) => done.id === candidate.id))!;
    if (row.externalId !== null && !(await workItemExists(tx, row.id))) {
      throw new WorkGraphError("DUPLICATE", `project ${projectId} already has an item with externalId ${row.externalId}`, { projectId, externalId: row.externalId });
    }
    throw new WorkGraphError("DUPLICATE", `work item ${row.id} already exists`, { id: row.id });
  }

  const edges = rows.flatMap((row) => row.dependsOn.map((blocker) => [row.id, blocker] as const));
  if (edges.length > 0) {
    await tx.$executeRaw`INSERT INTO dependencies (work_item_id, depends_on_id)
      SELECT * FROM unnest(${edges.map((e) => e[0])}::text[], ${edges.map((e) => e[1])}::text[])`;
  }
  if (parentId !== null) {
    await tx.$executeRaw`UPDATE work_items SET open_child_count = open_child_count + ${rows.length}, updated_at = work_graph_clock()
      WHERE id = ${parentId}`;
  }
  // A new item has no dependents yet, so a new cycle must run from what it waits for back to itself.
  for (const row of rows) {
    if (row.dependsOn.length === 0) continue;
    const starts = row.dependsOn.map((id) => ({ id, up: false }));
    if (parentId !== null) starts.push({ id: parentId, up: true });
    if (await waitsForReaches(tx, starts, [{ id: row.id, up: false }])) {
      throw new WorkGraphError("DEPENDENCY_CYCLE", `work item ${row.id} would wait for itself`, { workItemId: row.id });
    }
  }
  await appendEvents(
    tx,
    rows.map((row) => ({
      workItemId: row.id,
      type: "work_item.created",
      actor,
      data: { title: row.title, parentId, priority: row.priority, dependsOn: row.dependsOn },
    })),
  );
  return ids;
}

/** The status of work item `id`, or undefined when it does not exist (the caller holds its lock). */
export async function statusOf(tx: Tx, id: string): Promise<string | undefined> {
  const [row] = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM work_items WHERE id = ${id}`;
  return row?.status;
}

/** Changes queue order only (rule 10 (queue order)); a live lease is never pre-empted by it (rule 5 (no pre-emption)). */
export async function setPriority(tx: Tx, id: string, priority: number): Promise<void> {
  await tx.$executeRaw`UPDATE work_items SET priority = ${priority}, updated_at = work_graph_clock() WHERE id = ${id}`;
}

/** workItems.update's fields; undefined = unchanged, null clears a concurrency key or time gate. */
export interface ItemFieldChanges {
  title?: string;
  description?: string | null;
  requires?: string[];
  concurrencyKey?: string | null;
  notBefore?: string | null;
}

/** Sets the given fields of item `id` (the caller holds its lock). A lease's own concurrency key never changes (leases.concurrency_key). */
export async function updateItemFields(tx: Tx, id: string, changes: ItemFieldChanges): Promise<void> {
  const sets: Prisma.Sql[] = [Prisma.sql`updated_at = work_graph_clock()`];
  if (changes.title !== undefined) sets.push(Prisma.sql`title = ${changes.title}`);
  if (changes.description !== undefined) sets.push(Prisma.sql`description = ${changes.description}`);
  if (changes.requires !== undefined) sets.push(Prisma.sql`requires = ${changes.requires}::text[]`);
  if (changes.concurrencyKey !== undefined) sets.push(Prisma.sql`concurrency_key = ${changes.concurrencyKey}`);
  if (changes.notBefore !== undefined) sets.push(Prisma.sql`not_before = ${changes.notBefore}::timestamptz`);
  await tx.$executeRaw`UPDATE work_items SET ${Prisma.join(sets, ", ")} WHERE id = ${id}`;
}

/** Reparents `id` under `parentId` (or makes it a root), its inherited blockers shifted by `delta`. */
export async function setParent(tx: Tx, id: string, parentId: string | null, delta: number): Promise<void> {
  await tx.$executeRaw`UPDATE work_items SET parent_id = ${parentId}, ancestor_dependency_count = ancestor_dependency_count + ${delta},
    updated_at = work_graph_clock() WHERE id = ${id}`;
}

/** Counts an open child more (1) or less (-1) on `parentId`. */
export async function shiftOpenChildren(tx: Tx, parentId: string, delta: 1 | -1): Promise<void> {
  await tx.$executeRaw`UPDATE work_items SET open_child_count = open_child_count + ${delta} WHERE id = ${parentId}`;
}

/** Counts an open blocker more (1) or less (-1) on the dependent itself (its descendants: shiftDescendantsInheritedDependencies). */
export async function shiftOpenDependencies(tx: Tx, dependentId: string, delta: 1 | -1): Promise<void> {
  await tx.$executeRaw`UPDATE work_items SET open_dependency_count = open_dependency_count + ${delta}, updated_at = work_graph_clock()
    WHERE id = ${dependentId}`;
}

/** Adds the edge `workItemId` depends on `dependsOnId`; false when it already exists. */
export async function insertDependency(tx: Tx, workItemId: string, dependsOnId: string): Promise<boolean> {
  const added = await tx.$executeRaw`INSERT INTO dependencies (work_item_id, depends_on_id)
    VALUES (${workItemId}, ${dependsOnId}) ON CONFLICT DO NOTHING`;
  return added > 0;
}

/** Removes the edge `workItemId` depends on `dependsOnId`; false when there was none. */
export async function deleteDependency(tx: Tx, workItemId: string, dependsOnId: string): Promise<boolean> {
  const removed = await tx.$executeRaw`DELETE FROM dependencies WHERE work_item_id = ${workItemId} AND depends_on_id = ${dependsOnId}`;
  return removed > 0;
}

/** A page of items, oldest first (created_at, id), after item `after`: filtered by projects (a fragment over `w`), stage, parent, external id and a search in id and title. */
export async function selectWorkItemsPage(
  db: Tx,
  filter: { stages: Stage[]; parentId?: string; search?: string; after: string | null; limit: number; projects: Prisma.Sql; externalId?: string },
): Promise<WorkItem[]> {
  const conditions: Prisma.Sql[] = [filter.projects];
  if (filter.externalId !== undefined) conditions.push(Prisma.sql`w.external_id = ${filter.externalId}`);
  if (filter.stages.length > 0) conditions.push(Prisma.sql`(${STAGE_SQL}) = ANY(${filter.stages}::text[])`);
  if (filter.parentId !== undefined) conditions.push(Prisma.sql`w.parent_id = ${filter.parentId}`);
  if (filter.search) {
    const pattern = `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conditions.push(Prisma.sql`(w.id ILIKE ${pattern} OR w.title ILIKE ${pattern})`);
  }
  if (filter.after) conditions.push(Prisma.sql`(w.created_at, w.id) > (SELECT c.created_at, c.id FROM work_items c WHERE c.id = ${filter.after})`);
  return selectWorkItems(db, Prisma.join(conditions, " AND "), Prisma.sql`w.created_at, w.id`, filter.limit);
}

/** The continuity tiers (rule 9 (continuity)) of `workerId`'s next claim, in the order it takes them. */
export const queueTiers = (workerId: string, continuitySeconds: number): Prisma.Sql[] => claimTiers(workerId, continuitySeconds);

async function projectExists(tx: Tx, id: string): Promise<boolean> {
  const [row] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM projects WHERE id = ${id}`;
  return row !== undefined;
}

export async function workItemExists(db: Tx, id: string): Promise<boolean> {
  const [exists] = await db.$queryRaw<{ id: string }[]>`SELECT id FROM work_items WHERE id = ${id}`;
  return exists !== undefined;
}
