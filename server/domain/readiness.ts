import { Prisma } from "../generated/prisma/client";
import type { WaitingStage } from "@work-graph/contract";

/*
 * Readiness rules (API.md "Stage precedence", rules 5–10), kept as counters on each work item
 * and changed in the same transaction as their cause, so the claim index
 * (work_items_claim_order_idx) always lists exactly the items with nothing structural in the way:
 *
 *   open_dependency_count      direct dependencies whose blocker is still open
 *   ancestor_dependency_count  the same, summed over every proper ancestor (a dependency on a
 *                              parent constrains all its descendants)
 *   open_child_count           direct children that are still open
 *   blocking_attention_count   unresolved blocking attention requests
 *
 * Released and cancelled blockers satisfy a dependency. Leases are not counters: an item with
 * an unended lease stays in the claim index and claim filters on lease_expires_at, so an
 * expired lease is reclaimable at once, before the sweep ends it.
 *
 * Concurrency: counter changes are increments under row locks, so they commute. Operations
 * that *read* counters to derive others (a new child inherits its parent's chain) first lock
 * that chain with lockAncestorChain, and graph-shape edits are serialized by lockGraphShape (both in server/sql/graph.ts),
 * so the set of rows each propagation touches cannot change underneath it.
 */

/**
 * The one readiness predicate: nothing structural in the way. It is the predicate of the partial
 * claim index work_items_claim_order_idx (tests/graph/readiness-source.test.ts compares it with
 * pg_indexes), the base of CLAIMABLE, and exactly what STAGE_SQL calls 'ready' once a live lease
 * is ruled out (tests/graph/readiness-source.test.ts checks both).
 */
export const STRUCTURALLY_READY_SQL =
  "status = 'open' AND open_dependency_count = 0 AND ancestor_dependency_count = 0 AND open_child_count = 0 AND blocking_attention_count = 0";

/**
 * Rule 15 (time gates): the item's notBefore is still ahead of the database clock. Not part of
 * the claim index's predicate (time moves; an index predicate cannot): claims step over such
 * items (OPEN_GATE), and the stage precedence places it just above ready.
 */
export const NOT_YET_SQL = "w.not_before > work_graph_now()";

/** Rule 15: the time gate is open (no notBefore, or it has passed), over alias `w`. */
export const OPEN_GATE = Prisma.sql`(w.not_before IS NULL OR w.not_before <= work_graph_now())`;

/**
 * What keeps an open item from being ready, one condition per stage, in the stage precedence of
 * API.md (the first that holds decides the stage): SQL over a work_items row aliased `w`.
 * STAGE_SQL picks the first that holds; WAITING_ON_SQL lists all that hold, which is how the
 * dashboard explains a stage (dashboard.neighbourhood's waitingOn) without a rule of its own.
 */
export const STAGE_CONDITIONS: readonly { stage: WaitingStage; sql: string }[] = [
  { stage: "needs_attention", sql: "w.blocking_attention_count > 0" },
  { stage: "leased", sql: "w.lease_expires_at > work_graph_now()" },
  { stage: "waiting_on_children", sql: "w.open_child_count > 0" },
  { stage: "blocked", sql: "w.open_dependency_count > 0 OR w.ancestor_dependency_count > 0" },
  { stage: "scheduled", sql: NOT_YET_SQL },
];

/** The item's stage (API.md "Stage precedence"), over alias `w`. */
export const STAGE_SQL = Prisma.raw(`CASE
    WHEN w.status <> 'open' THEN w.status
    ${STAGE_CONDITIONS.map(({ stage, sql }) => `WHEN ${sql} THEN '${stage}'`).join("\n    ")}
    ELSE 'ready' END`);

/**
 * Every condition of STAGE_CONDITIONS that holds for an open item, the deciding one first, as a
 * text[] over alias `w`: empty when the item is ready, released or cancelled.
 */
export const WAITING_ON_SQL = Prisma.raw(`CASE WHEN w.status <> 'open' THEN '{}'::text[] ELSE array_remove(ARRAY[
    ${STAGE_CONDITIONS.map(({ stage, sql }) => `CASE WHEN ${sql} THEN '${stage}' END`).join(",\n    ")}
  ]::text[], NULL) END`);

/** Structurally ready (the partial claim index) and not held by a live lease. */
export const CLAIMABLE = Prisma.sql`${Prisma.raw(STRUCTURALLY_READY_SQL)}
  AND (lease_expires_at IS NULL OR lease_expires_at <= work_graph_now())`;

/**
 * Structurally ready and without any lease: the partial index work_items_claim_unleased_idx.
 * A claim walks it instead of the claim index, which also lists the items under live leases
 * (an expired one must be reclaimable at once, before the sweep ends it): with thousands of
 * live leases at the head of the queue, every claim would step over all of them.
 */
export const UNLEASED_READY_SQL = `${STRUCTURALLY_READY_SQL} AND lease_expires_at IS NULL`;

/**
 * Whether some structurally ready item holds an expired lease that nothing has ended yet: the
 * earliest expiry among them, through the expiry index. While none does, CLAIMABLE is exactly
 * UNLEASED_READY_SQL; the claim uses CLAIMABLE only when one does (for at most the sweep's
 * interval after an expiry).
 */
export const SOME_LEASE_EXPIRED = Prisma.sql`(SELECT lease_expires_at FROM work_items
  WHERE lease_expires_at IS NOT NULL AND ${Prisma.raw(STRUCTURALLY_READY_SQL)} ORDER BY lease_expires_at LIMIT 1) <= work_graph_now()`;

/**
 * Rule 9 (continuity): for `window` seconds after an item's last blocking attention request
 * was resolved, its previous worker takes it ahead of other ready items and everyone else
 * only after them. The three tiers partition the claimable items (held for this worker, not
 * held, held for another); each is one index-ordered probe, so claim order stays an index walk.
 */
export function claimTiers(workerId: string, window: number): Prisma.Sql[] {
  if (window <= 0) return [Prisma.empty];
  const held = Prisma.sql`continuity_worker_id IS NOT NULL AND continuity_since > work_graph_now() - make_interval(secs => ${window})`;
  return [
    Prisma.sql`AND ${held} AND continuity_worker_id = ${workerId}`,
    Prisma.sql`AND NOT (${held})`,
    Prisma.sql`AND ${held} AND continuity_worker_id <> ${workerId}`,
  ];
}

/** Rule 9 (continuity) given up: the item-row change of a revocation, for endLeasesSql's itemChanges. */
export const CLEAR_CONTINUITY = Prisma.sql`, continuity_worker_id = NULL, continuity_since = NULL`;

/**
 * Rule 10 (queue order): higher priority first, then older createdAt, then id, over alias `w`.
 * The order of the claim index work_items_claim_order_idx, of every claim probe and of the
 * queue view (server/queries/work-items.ts queue).
 */
export const QUEUE_ORDER = Prisma.sql`w.priority DESC, w.created_at, w.id`;

/**
 * Rule 6 (blocking attention ends the lease and holds the item): the item-row change that comes with
 * ending a lease as `attention_requested`, for endLeasesSql's itemChanges.
 */
export const HOLD_FOR_ATTENTION = Prisma.sql`, blocking_attention_count = w.blocking_attention_count + 1`;

/**
 * CTEs for "the item in CTE `done(id, parent_id, at)` has just become released or cancelled":
 * each dependent has one open blocker less and the parent one open child less. Yields CTE
 * `unblocked(id)`, the dependents. When there are any, follow up with shiftBelowUnblocked in a later statement
 * (a row may be updated only once per statement, and this one's snapshot may predate a subtree
 * moved or created under a dependent whose row lock it had to wait for).
 */
export const PROPAGATE_TERMINATION = Prisma.sql`
  unblocked AS (
    UPDATE work_items d SET open_dependency_count = d.open_dependency_count - 1, updated_at = done.at
      FROM done, dependencies e
     WHERE e.depends_on_id = done.id AND d.id = e.work_item_id
    RETURNING d.id
  ), parent_updated AS (
    UPDATE work_items p SET open_child_count = p.open_child_count - 1, updated_at = done.at
      FROM done WHERE p.id = done.parent_id
    RETURNING p.open_child_count
  )`;

/**
 * Whether CTE `unblocked` is not empty. The terminated item was row-locked by an earlier
 * statement, so no dependency on it can appear after this snapshot: with no dependents there
 * is no subtree to shift.
 */
export const HAS_UNBLOCKED = Prisma.sql`EXISTS (SELECT 1 FROM unblocked)`;

/**
 * Whether the termination PROPAGATE_TERMINATION recorded may have made work claimable: a
 * dependent has one open blocker less, or the parent has no open child left. Otherwise the
 * only items it changed are the terminated one and a parent still waiting on other children.
 */
export const MAY_HAVE_READIED = Prisma.sql`(${HAS_UNBLOCKED} OR EXISTS (SELECT 1 FROM parent_updated WHERE open_child_count = 0))`;

/**
 * The subtrees under `itemId`'s dependents inherit one open blocker less per path: a statement
 * of its own after PROPAGATE_TERMINATION, when HAS_UNBLOCKED.
 */
export const SHIFT_BELOW_UNBLOCKED = (itemId: string) => Prisma.sql`
    -- One decrement per path: an item under two dependents of this blocker inherited it twice.
    WITH RECURSIVE below(id) AS (
      SELECT c.id FROM dependencies d JOIN work_items c ON c.parent_id = d.work_item_id WHERE d.depends_on_id = ${itemId}
      UNION ALL
      SELECT c.id FROM below b JOIN work_items c ON c.parent_id = b.id
    ), paths AS (SELECT id, count(*)::int AS n FROM below GROUP BY id)
    UPDATE work_items w SET ancestor_dependency_count = w.ancestor_dependency_count - paths.n
      FROM paths WHERE w.id = paths.id`;
