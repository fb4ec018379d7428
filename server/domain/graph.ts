import type { Tx } from "../database/transaction";
import { notFound, WorkGraphError } from "../errors";
import { appendEvents } from "./events";
import { generateWorkItemId } from "./ids";
import { lockAncestorChain, waitsForReaches } from "./readiness";

export interface NewWorkItem {
  id?: string;
  title: string;
  description?: string | null;
  priority?: number;
  dependsOn?: string[];
}

/**
 * Inserts items (all under `parentId`, or roots) with their dependency edges and readiness
 * counters, and rejects any that would close a cycle. `dependsOn` may name items inserted in
 * the same call. The caller holds lockGraphShape when any item has a parent or dependencies.
 */
export async function insertWorkItems(tx: Tx, parentId: string | null, items: NewWorkItem[], actor: string): Promise<string[]> {
  let inherited = 0;
  let parentPriority = 0;
  const declared = [...new Set(items.flatMap((item) => item.dependsOn ?? []))];
  if (parentId !== null) {
    // The parent chain and the blockers in one statement, in id order (the global lock order).
    const parent = await lockAncestorChain(tx, parentId, declared);
    if (!parent) throw notFound("parent work item", parentId);
    if (parent.status !== "open") {
      throw new WorkGraphError("ALREADY_TERMINAL", `parent ${parentId} is already ${parent.status}`, { workItemId: parentId, status: parent.status });
    }
    inherited = parent.inherited;
    parentPriority = parent.priority;
  }

  const rows = items.map((item) => ({
    id: item.id ?? generateWorkItemId(item.title),
    title: item.title,
    description: item.description ?? null,
    priority: item.priority ?? parentPriority,
    dependsOn: [...new Set(item.dependsOn ?? [])],
  }));
  const ids = rows.map((row) => row.id);
  const duplicateInCall = ids.find((id, index) => ids.indexOf(id) !== index);
  if (duplicateInCall) throw new WorkGraphError("DUPLICATE", `work item id ${duplicateInCall} is given twice`, { id: duplicateInCall });
  const selfDependent = rows.find((row) => row.dependsOn.includes(row.id));
  if (selfDependent) throw new WorkGraphError("DEPENDENCY_CYCLE", `work item ${selfDependent.id} cannot depend on itself`, { workItemId: selfDependent.id });

  // Blockers outside this call: they must exist; share-locked so a concurrent release of one
  // either commits before we count it as open or waits until our edge is visible to it.
  const external = [...new Set(rows.flatMap((row) => row.dependsOn))].filter((id) => !ids.includes(id));
  const blockers = external.length === 0 ? [] : await tx.$queryRaw<{ id: string; open: boolean }[]>`
    SELECT id, status = 'open' AS open FROM work_items WHERE id = ANY(${external}::text[]) ORDER BY id FOR SHARE`;
  const missing = external.find((id) => !blockers.some((blocker) => blocker.id === id));
  if (missing) throw notFound("dependency", missing);
  const openBlocker = new Set(blockers.filter((blocker) => blocker.open).map((blocker) => blocker.id).concat(ids));

  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO work_items (id, title, description, parent_id, priority, open_dependency_count, ancestor_dependency_count)
    SELECT * FROM unnest(${ids}::text[], ${rows.map((r) => r.title)}::text[], ${rows.map((r) => r.description)}::text[],
                         ${rows.map(() => parentId)}::text[], ${rows.map((r) => r.priority)}::int[],
                         ${rows.map((r) => r.dependsOn.filter((id) => openBlocker.has(id)).length)}::int[],
                         ${rows.map(() => inherited)}::int[])
    ON CONFLICT (id) DO NOTHING
    RETURNING id`;
  if (inserted.length !== rows.length) {
    const taken = ids.find((id) => !inserted.some((row) => row.id === id))!;
    throw new WorkGraphError("DUPLICATE", `work item ${taken} already exists`, { id: taken });
  }

  const edges = rows.flatMap((row) => row.dependsOn.map((blocker) => [row.id, blocker] as const));
  if (edges.length > 0) {
    await tx.$executeRaw`INSERT INTO dependencies (work_item_id, depends_on_id)
      SELECT * FROM unnest(${edges.map((e) => e[0])}::text[], ${edges.map((e) => e[1])}::text[])`;
  }
  if (parentId !== null) {
    await tx.$executeRaw`UPDATE work_items SET open_child_count = open_child_count + ${rows.length}, updated_at = clock_timestamp()
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

