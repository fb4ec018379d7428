import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import { isTerminalStage, type WaitingStage } from "../domain/contract";
import { STAGE_SQL, WAITING_ON_SQL } from "../domain/readiness";
import type { AttentionRequest, Lease, Stage } from "../domain/types";
import { ATTENTION_COLUMNS, toAttentionRequest } from "../domain/views";
import { notFound } from "../errors";

/*
 * Read-only views the dashboard needs beyond API.md's procedures (exposed as
 * dashboard.inbox and dashboard.neighbourhood). They only read; nothing here changes state.
 */

/** An item as the dashboard shows it next to another one: id, title and current stage. */
export interface ItemRef {
  id: string;
  title: string;
  stage: Stage;
}

export type InboxEntry = AttentionRequest & { workItemTitle: string; workItemStage: Stage };

type InboxRow = Parameters<typeof toAttentionRequest>[0] & { workItemTitle: string; workItemStage: Stage };

/**
 * The attention inbox: open requests oldest first (the longest-waiting question first);
 * resolved requests most recently resolved first. Each with its item's title and stage now.
 */
export async function attentionInbox(db: Db, input: { status: "open" | "resolved"; limit: number }): Promise<InboxEntry[]> {
  const order = input.status === "open" ? Prisma.sql`a.created_at, a.id` : Prisma.sql`a.resolved_at DESC, a.id`;
  const rows = await db.$queryRaw<InboxRow[]>`
    SELECT ${ATTENTION_COLUMNS}, w.title AS "workItemTitle", ${STAGE_SQL} AS "workItemStage"
      FROM attention_requests a JOIN work_items w ON w.id = a.work_item_id
     WHERE a.status = ${input.status}
     ORDER BY ${order} LIMIT ${input.limit}`;
  return rows.map(({ workItemTitle, workItemStage, ...row }) => ({ ...toAttentionRequest(row), workItemTitle, workItemStage }));
}

export interface Neighbourhood {
  /** Parent first, then its parent, up to the root. */
  ancestors: (ItemRef & { depth: number })[];
  /** Direct blockers of the item (its dependsOn), with their stage. */
  dependencies: ItemRef[];
  /** Items that depend on this one (first `limit` by id) and how many there are in all. */
  dependents: ItemRef[];
  dependentCount: number;
  /** Direct children (first `limit`, oldest first) and how many there are in all. */
  children: ItemRef[];
  childCount: number;
  /** Open dependencies of ancestors: they block this item too (API.md stage precedence). */
  ancestorBlockers: (ItemRef & { ancestorId: string })[];
  /**
   * Why the item is not ready, as the server's readiness rule sees it (server/domain/readiness.ts):
   * every condition that holds, the one that decides the stage first, each with what stands in
   * the way. Empty when the item is ready, released or cancelled.
   */
  waitingOn: WaitingOn[];
}

/** Child items listed under a waiting_on_children condition, at most. */
const WAITING_CHILDREN_SHOWN = 10;

export type WaitingOn =
  | { stage: "needs_attention"; requests: Pick<AttentionRequest, "id" | "question" | "workerId" | "createdAt">[] }
  | { stage: "leased"; lease: Pick<Lease, "id" | "workerId" | "epoch" | "expiresAt"> | null }
  | { stage: "waiting_on_children"; openChildCount: number; children: ItemRef[] }
  | { stage: "blocked"; dependencies: ItemRef[]; ancestorBlockers: (ItemRef & { ancestorId: string })[] };

interface WaitingRow {
  waitingOn: WaitingStage[];
  openChildCount: number;
  lease: { id: string; workerId: string; epoch: number; expiresAt: Date } | null;
}

/** Everything around one item the work-item page needs to explain its stage and draw its graph. */
export async function itemNeighbourhood(db: Db, id: string, limit = 100): Promise<Neighbourhood> {
  const [state] = await db.$queryRaw<WaitingRow[]>`
    SELECT ${WAITING_ON_SQL} AS "waitingOn", w.open_child_count AS "openChildCount",
           (SELECT json_build_object('id', l.id, 'workerId', l.worker_id, 'epoch', l.epoch, 'expiresAt', l.expires_at)
              FROM leases l WHERE l.id = w.current_lease_id AND w.lease_expires_at > statement_timestamp()) AS lease
      FROM work_items w WHERE w.id = ${id}`;
  if (!state) throw notFound("work item", id);
  const ref = Prisma.sql`w.id, w.title, ${STAGE_SQL} AS stage`;
  const [ancestors, dependencies, dependents, children, [count], [dependentCount]] = await Promise.all([
    db.$queryRaw<(ItemRef & { depth: number })[]>`
      WITH RECURSIVE chain(id, depth) AS (
        SELECT parent_id, 1 FROM work_items WHERE id = ${id} AND parent_id IS NOT NULL
        UNION ALL
        SELECT w.parent_id, c.depth + 1 FROM chain c JOIN work_items w ON w.id = c.id
         WHERE w.parent_id IS NOT NULL AND c.depth < 10000
      )
      SELECT ${ref}, c.depth FROM chain c JOIN work_items w ON w.id = c.id ORDER BY c.depth`,
    db.$queryRaw<ItemRef[]>`
      SELECT ${ref} FROM dependencies d JOIN work_items w ON w.id = d.depends_on_id
       WHERE d.work_item_id = ${id} ORDER BY w.id`,
    db.$queryRaw<ItemRef[]>`
      SELECT ${ref} FROM dependencies d JOIN work_items w ON w.id = d.work_item_id
       WHERE d.depends_on_id = ${id} ORDER BY w.id LIMIT ${limit}`,
    db.$queryRaw<ItemRef[]>`
      SELECT ${ref} FROM work_items w WHERE w.parent_id = ${id} ORDER BY w.created_at, w.id LIMIT ${limit}`,
    db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM work_items WHERE parent_id = ${id}`,
    db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM dependencies WHERE depends_on_id = ${id}`,
  ]);
  const ancestorIds = ancestors.map((ancestor) => ancestor.id);
  const ancestorBlockers = ancestorIds.length === 0 ? [] : await db.$queryRaw<(ItemRef & { ancestorId: string })[]>`
    SELECT d.work_item_id AS "ancestorId", ${ref} FROM dependencies d JOIN work_items w ON w.id = d.depends_on_id
     WHERE d.work_item_id = ANY(${ancestorIds}::text[]) AND w.status = 'open' ORDER BY d.work_item_id, w.id`;
  const waitingOn: WaitingOn[] = [];
  for (const stage of state.waitingOn) {
    switch (stage) {
      case "needs_attention": {
        const requests = await db.$queryRaw<{ id: string; question: string; workerId: string; createdAt: Date }[]>`
          SELECT a.id::text AS id, a.question, a.worker_id AS "workerId", a.created_at AS "createdAt" FROM attention_requests a
           WHERE a.work_item_id = ${id} AND a.status = 'open' AND a.blocking ORDER BY a.created_at, a.id`;
        waitingOn.push({ stage, requests: requests.map((request) => ({ ...request, createdAt: new Date(request.createdAt).toISOString() })) });
        break;
      }
      case "leased":
        waitingOn.push({
          stage,
          lease: state.lease && { ...state.lease, epoch: Number(state.lease.epoch), expiresAt: new Date(state.lease.expiresAt).toISOString() },
        });
        break;
      case "waiting_on_children": {
        const openChildren = await db.$queryRaw<ItemRef[]>`
          SELECT ${ref} FROM work_items w WHERE w.parent_id = ${id} AND w.status = 'open'
           ORDER BY w.created_at, w.id LIMIT ${WAITING_CHILDREN_SHOWN}`;
        waitingOn.push({ stage, openChildCount: Number(state.openChildCount), children: openChildren });
        break;
      }
      case "blocked":
        // The item's open dependencies: the ones of `dependencies` above (all of them, by id) that are not finished.
        waitingOn.push({ stage, dependencies: dependencies.filter((dependency) => !isTerminalStage(dependency.stage)), ancestorBlockers });
        break;
    }
  }
  return {
    ancestors: ancestors.map((row) => ({ ...row, depth: Number(row.depth) })),
    dependencies,
    dependents,
    dependentCount: dependentCount?.n ?? 0,
    children,
    childCount: count?.n ?? 0,
    ancestorBlockers,
    waitingOn,
  };
}
