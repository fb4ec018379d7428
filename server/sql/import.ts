import type { Tx } from "../database/transaction";
import type { NewRow } from "../domain/import-plan";

/*
 * workItems.import's statements (the plan is server/domain/import-plan.ts): each one handles
 * the whole import at once through arrays (unnest), so an import costs the same handful of round
 * trips whatever its size.
 */

/** Items carrying any of these external ids, in every project (the plan matches them by project). */
export function selectByExternalIds(tx: Tx, externalIds: string[]): Promise<{ id: string; projectId: string; externalId: string }[]> {
  if (externalIds.length === 0) return Promise.resolve([]);
  return tx.$queryRaw`SELECT id, project_id AS "projectId", external_id AS "externalId" FROM work_items
    WHERE external_id = ANY(${externalIds}::text[])`;
}

/** Inserts the planned items with their readiness counters; returns the ids that went in (a taken id or external id inserts nothing). */
export async function insertPlannedItems(tx: Tx, rows: NewRow[]): Promise<string[]> {
  const openChildren = new Map<string, number>();
  for (const row of rows) if (row.parentId !== null) openChildren.set(row.parentId, (openChildren.get(row.parentId) ?? 0) + 1);
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO work_items (id, title, description, parent_id, priority, open_dependency_count, ancestor_dependency_count,
                            open_child_count, project_id, requires, concurrency_key, not_before, external_id)
    SELECT i.id, i.title, i.description, i.parent_id, i.priority, i.open_dependencies, i.inherited, i.open_children, i.project_id,
           ARRAY(SELECT jsonb_array_elements_text(i.requires)), i.concurrency_key,
           CASE WHEN i.delay IS NOT NULL THEN work_graph_now() + make_interval(secs => i.delay) ELSE i.not_before::timestamptz END,
           i.external_id
      FROM unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.title)}::text[], ${rows.map((r) => r.description)}::text[],
                  ${rows.map((r) => r.parentId)}::text[], ${rows.map((r) => r.priority)}::int[], ${rows.map((r) => r.openDependencies)}::int[],
                  ${rows.map((r) => r.inherited)}::int[], ${rows.map((r) => openChildren.get(r.id) ?? 0)}::int[],
                  ${rows.map((r) => r.projectId)}::text[], ${rows.map((r) => JSON.stringify(r.requires))}::jsonb[],
                  ${rows.map((r) => r.concurrencyKey)}::text[], ${rows.map((r) => r.notBefore)}::text[],
                  ${rows.map((r) => r.delaySeconds)}::int[], ${rows.map((r) => r.externalId)}::text[])
           AS i(id, title, description, parent_id, priority, open_dependencies, inherited, open_children, project_id,
                requires, concurrency_key, not_before, delay, external_id)
    ON CONFLICT DO NOTHING
    RETURNING id`;
  return inserted.map((row) => row.id);
}

export async function insertPlannedDependencies(tx: Tx, rows: NewRow[]): Promise<void> {
  const edges = rows.flatMap((row) => row.dependsOn.map((blocker) => [row.id, blocker] as const));
  if (edges.length === 0) return;
  await tx.$executeRaw`INSERT INTO dependencies (work_item_id, depends_on_id)
    SELECT * FROM unnest(${edges.map((e) => e[0])}::text[], ${edges.map((e) => e[1])}::text[])`;
}

/** Counts the new open children of existing parents. */
export async function addOpenChildren(tx: Tx, newChildren: Map<string, number>): Promise<void> {
  if (newChildren.size === 0) return;
  await tx.$executeRaw`UPDATE work_items w SET open_child_count = w.open_child_count + n.count, updated_at = work_graph_clock()
      FROM unnest(${[...newChildren.keys()]}::text[], ${[...newChildren.values()]}::int[]) AS n(id, count)
     WHERE w.id = n.id`;
}
