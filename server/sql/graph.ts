import { Prisma } from "../generated/prisma/client";
import type { Tx } from "../database/transaction";

/*
 * Statements of the graph's shape and readiness counters (the rules and fragments are in
 * server/domain/readiness.ts): graph-shape locks, the global lock order (by id), inherited
 * blockers and the waits-for reachability that refuses cycles.
 */

/** Transaction-level advisory lock serializing graph-shape edits (cycle checks); claims never take it. */
export async function lockGraphShape(tx: Tx): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('work_graph.graph_shape'))`;
}

/** What a new child of an item takes from it: project, inherited blockers, priority, `requires` and concurrency key. */
export interface AncestorChainHead {
  inherited: number;
  status: string;
  priority: number;
  projectId: string;
  requires: string[];
  concurrencyKey: string | null;
}

/**
 * Share-locks `id`, all its ancestors and the items `alsoLock` names, in one statement in id
 * order (the global lock order), and returns id's status and how many open dependencies a new
 * child of `id` inherits (id's own plus its ancestors'), or null when `id` does not exist.
 */
export async function lockAncestorChain(tx: Tx, id: string, alsoLock: string[] = []): Promise<AncestorChainHead | null> {
  const rows = await lockAncestorChains(tx, [id], alsoLock);
  return rows.find((row) => row.id === id) ?? null;
}

/** lockAncestorChain for several items at once: a row for each of `ids` and `alsoLock` that exists. */
export async function lockAncestorChains(tx: Tx, ids: string[], alsoLock: string[] = []): Promise<(AncestorChainHead & { id: string })[]> {
  return tx.$queryRaw<(AncestorChainHead & { id: string })[]>`
    WITH RECURSIVE chain(id) AS (
      SELECT unnest(${ids}::text[])
      UNION
      SELECT w.parent_id FROM chain c JOIN work_items w ON w.id = c.id WHERE w.parent_id IS NOT NULL
    ), locked AS (
      SELECT w.id, w.status, w.priority, w.open_dependency_count, w.ancestor_dependency_count,
             w.project_id, w.requires, w.concurrency_key
        FROM work_items w
       WHERE w.id IN (SELECT chain.id FROM chain UNION SELECT unnest(${alsoLock}::text[]))
       ORDER BY w.id
         FOR SHARE OF w
    )
    SELECT id, (open_dependency_count + ancestor_dependency_count)::int AS inherited, status, priority,
           project_id AS "projectId", requires, concurrency_key AS "concurrencyKey"
      FROM locked WHERE id = ANY(${ids}::text[]) OR id = ANY(${alsoLock}::text[])`;
}

/**
 * Row-locks (FOR UPDATE) the given items and every descendant of `subtreeOf`, in one statement
 * in id order: the global lock order every operation that changes several items follows, so
 * two of them wait for each other instead of deadlocking.
 */
export async function lockInIdOrder(tx: Tx, ids: string[], subtreeOf: string | null = null): Promise<void> {
  await tx.$executeRaw`
    WITH RECURSIVE below(id) AS (
      SELECT c.id FROM work_items c WHERE c.parent_id = ${subtreeOf}
      UNION ALL
      SELECT c.id FROM below b JOIN work_items c ON c.parent_id = b.id
    )
    SELECT 1 FROM work_items w
     WHERE w.id IN (SELECT unnest(${ids}::text[]) UNION SELECT id FROM below)
     ORDER BY w.id FOR UPDATE OF w`;
}

/** Adds `delta` to ancestor_dependency_count of every proper descendant of `rootId`. */
export async function shiftDescendantsInheritedDependencies(tx: Tx, rootId: string, delta: number): Promise<void> {
  if (delta === 0) return;
  await tx.$executeRaw`
    WITH RECURSIVE below(id) AS (
      SELECT c.id FROM work_items c WHERE c.parent_id = ${rootId}
      UNION ALL
      SELECT c.id FROM below b JOIN work_items c ON c.parent_id = b.id
    )
    UPDATE work_items w SET ancestor_dependency_count = w.ancestor_dependency_count + ${delta}
      FROM below WHERE w.id = below.id`;
}


/** One step of the waits-for walk from state `r` (id, up), as a lateral subquery of (id, up). */
const WAITS_FOR_STEP = Prisma.sql`(
  SELECT c.id, false AS up FROM work_items c WHERE NOT r.up AND c.parent_id = r.id
  UNION ALL
  SELECT d.depends_on_id, false FROM dependencies d WHERE d.work_item_id = r.id
  UNION ALL
  SELECT w.parent_id, true FROM work_items w WHERE w.id = r.id AND w.parent_id IS NOT NULL
)`;

/**
 * The waits-for graph must stay acyclic (API.md DEPENDENCY_CYCLE). A parent waits for its
 * children; a dependent and all its descendants wait for the blocker. We walk it as a graph of
 * (item, mode) states: from an item reached "full" we follow its children, its blockers and
 * its parent in mode "up"; from an ancestor reached "up" we follow only its blockers (full)
 * and its own parent (up), because an item waits for its ancestors' blockers, not for them.
 * Returns whether any of `targets` is reachable from `starts`.
 */
export async function waitsForReaches(
  tx: Tx,
  starts: { id: string; up: boolean }[],
  targets: { id: string; up: boolean }[],
): Promise<boolean> {
  if (starts.length === 0 || targets.length === 0) return false;
  const [row] = await tx.$queryRaw<{ found: boolean }[]>`
    WITH RECURSIVE reach(id, up) AS (
      SELECT * FROM unnest(${starts.map((s) => s.id)}::text[], ${starts.map((s) => s.up)}::boolean[])
      UNION
      SELECT step.id, step.up FROM reach r CROSS JOIN LATERAL ${WAITS_FOR_STEP} step
    )
    SELECT EXISTS (
      SELECT 1 FROM reach JOIN unnest(${targets.map((t) => t.id)}::text[], ${targets.map((t) => t.up)}::boolean[]) AS t(id, up)
        ON t.id = reach.id AND t.up = reach.up
    ) AS found`;
  return row?.found ?? false;
}

/**
 * Which of `targets` each of `starts` reaches over the waits-for graph (waitsForReaches' walk,
 * one per start), in one statement: how an import learns how the existing graph connects the
 * states its new items lead out to with the ones that lead back in.
 */
export async function waitsForPairs(
  tx: Tx,
  starts: { id: string; up: boolean }[],
  targets: { id: string; up: boolean }[],
): Promise<{ from: { id: string; up: boolean }; to: { id: string; up: boolean } }[]> {
  if (starts.length === 0 || targets.length === 0) return [];
  const rows = await tx.$queryRaw<{ fromId: string; fromUp: boolean; toId: string; toUp: boolean }[]>`
    WITH RECURSIVE reach(origin_id, origin_up, id, up) AS (
      SELECT s.id, s.up, s.id, s.up FROM unnest(${starts.map((s) => s.id)}::text[], ${starts.map((s) => s.up)}::boolean[]) AS s(id, up)
      UNION
      SELECT r.origin_id, r.origin_up, step.id, step.up FROM reach r CROSS JOIN LATERAL ${WAITS_FOR_STEP} step
    )
    SELECT DISTINCT reach.origin_id AS "fromId", reach.origin_up AS "fromUp", t.id AS "toId", t.up AS "toUp"
      FROM reach JOIN unnest(${targets.map((t) => t.id)}::text[], ${targets.map((t) => t.up)}::boolean[]) AS t(id, up)
        ON t.id = reach.id AND t.up = reach.up
     WHERE (reach.origin_id, reach.origin_up) <> (t.id, t.up)`;
  return rows.map((row) => ({ from: { id: row.fromId, up: row.fromUp }, to: { id: row.toId, up: row.toUp } }));
}

/** Whether `ancestorId` is `id` or one of its ancestors (a move under it would loop the hierarchy). */
export async function isAncestorOrSelf(tx: Tx, id: string, ancestorId: string): Promise<boolean> {
  const [under] = await tx.$queryRaw<{ found: boolean }[]>`
    WITH RECURSIVE up(id, parent_id) AS (
      SELECT id, parent_id FROM work_items WHERE id = ${id}
      UNION
      SELECT w.id, w.parent_id FROM up JOIN work_items w ON w.id = up.parent_id
    )
    SELECT EXISTS (SELECT 1 FROM up WHERE id = ${ancestorId}) AS found`;
  return under?.found ?? false;
}
