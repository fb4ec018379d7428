import { Prisma } from "../generated/prisma/client";
import type { Tx } from "../database/transaction";

export interface SubtreeItem {
  id: string;
  live: boolean;
  leaseId: string | null;
}

/*
 * The statements of cancelling a subtree (server/operations/cancel-subtree.ts). Rows are locked in
 * one global order (by id): first the items to cancel, then the items whose counters change
 * (dependents and parents), so two cascades, or a cascade and any other operation following the
 * same order, cannot deadlock. Sets are joined as unnest(…), never `= ANY(…)`: planning a
 * 20,000-element constant array element by element costs seconds.
 */

const itemSet = (ids: string[]) => Prisma.sql`unnest(${ids}::text[])`;

/** Locks every open descendant of `rootId` (also those below a released or cancelled item), in id order, with whether its lease is live. */
export async function lockOpenDescendants(tx: Tx, rootId: string): Promise<SubtreeItem[]> {
  return tx.$queryRaw<SubtreeItem[]>`
    WITH RECURSIVE sub(id) AS (
      SELECT c.id FROM work_items c WHERE c.parent_id = ${rootId}
      UNION ALL
      SELECT c.id FROM sub s JOIN work_items c ON c.parent_id = s.id
    )
    SELECT w.id, (w.lease_expires_at > work_graph_clock()) IS TRUE AS live, w.current_lease_id::text AS "leaseId"
      FROM work_items w JOIN sub ON sub.id = w.id
     WHERE w.status = 'open'
     ORDER BY w.id FOR UPDATE OF w`;
}

/** Locks, in id order, the items whose counters change when `ids` are cancelled: their dependents and parents outside the set. */
export async function lockCounterNeighbours(tx: Tx, ids: string[]): Promise<void> {
  const set = itemSet(ids);
  await tx.$executeRaw`
    WITH cancelling AS (SELECT id FROM ${set} AS s(id))
    SELECT 1 FROM work_items w
     WHERE w.id IN (SELECT e.work_item_id FROM dependencies e JOIN cancelling s ON s.id = e.depends_on_id
                    UNION SELECT c.parent_id FROM work_items c JOIN cancelling s ON s.id = c.id)
       AND w.id NOT IN (SELECT id FROM cancelling)
     ORDER BY w.id FOR UPDATE OF w`;
}

/** Marks `ids` cancelled with one status event each: descendants in id order, `rootId` last (the others name it as cascadedFrom). */
export async function markCancelled(tx: Tx, ids: string[], rootId: string, actor: string, data: Record<string, unknown>): Promise<void> {
  const set = itemSet(ids);
  await tx.$executeRaw`
    WITH cancelled AS (
      UPDATE work_items w SET status = 'cancelled', updated_at = work_graph_clock() FROM ${set} AS s(id) WHERE w.id = s.id
      RETURNING w.id
    )
    INSERT INTO events (work_item_id, type, actor, data)
    SELECT id, 'work_item.status_changed', ${actor},
           jsonb_build_object('from', 'open', 'to', 'cancelled') || ${JSON.stringify(data)}::jsonb
             || CASE WHEN id = ${rootId} THEN '{}'::jsonb ELSE jsonb_build_object('cascadedFrom', ${rootId}::text) END
      FROM cancelled ORDER BY (id = ${rootId}), id`;
}

/**
 * Every dependent has one open blocker less per cancelled blocker, every parent one open child
 * less per cancelled child (cancelled items' own counters included, as if one by one).
 */
export async function releaseCountersOf(tx: Tx, ids: string[]): Promise<void> {
  const set = itemSet(ids);
  await tx.$executeRaw`
    WITH blockers AS (
      SELECT e.work_item_id AS id, count(*)::int AS n FROM dependencies e JOIN ${set} AS s(id) ON s.id = e.depends_on_id GROUP BY 1
    ), children AS (
      SELECT c.parent_id AS id, count(*)::int AS n FROM work_items c JOIN ${set} AS s(id) ON s.id = c.id WHERE c.parent_id IS NOT NULL GROUP BY 1
    ), changes AS (
      SELECT coalesce(b.id, c.id) AS id, coalesce(b.n, 0) AS blockers, coalesce(c.n, 0) AS children
        FROM blockers b FULL JOIN children c ON c.id = b.id
    )
    UPDATE work_items w SET open_dependency_count = w.open_dependency_count - changes.blockers,
                            open_child_count = w.open_child_count - changes.children,
                            updated_at = work_graph_clock()
      FROM changes WHERE w.id = changes.id`;
}

/** Below each dependent of `ids`, every descendant inherited one open blocker per path: it loses it. */
export async function releaseInheritedBlockersOf(tx: Tx, ids: string[]): Promise<void> {
  const set = itemSet(ids);
  await tx.$executeRaw`
    WITH RECURSIVE below(id) AS (
      SELECT c.id FROM ${set} AS s(id) JOIN dependencies e ON e.depends_on_id = s.id JOIN work_items c ON c.parent_id = e.work_item_id
      UNION ALL
      SELECT c.id FROM below b JOIN work_items c ON c.parent_id = b.id
    ), paths AS (SELECT id, count(*)::int AS n FROM below GROUP BY id)
    UPDATE work_items w SET ancestor_dependency_count = w.ancestor_dependency_count - paths.n
      FROM paths WHERE w.id = paths.id`;
}
