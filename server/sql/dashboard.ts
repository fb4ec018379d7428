import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import type { WaitingStage } from "@work-graph/contract";
import { CLAIMABLE, OPEN_GATE, QUEUE_ORDER, STAGE_SQL, WAITING_ON_SQL } from "../domain/readiness";
import { AN_AGENT_CAN_TAKE, CAPABILITIES_NO_AGENT_HAS } from "../domain/unroutable";
import type { Stage } from "@work-graph/contract";
import { ATTENTION_COLUMNS, WORK_ITEM_COLUMNS, type toAttentionRequest, type WorkItemRow } from "../domain/views";

/* The dashboard's reads beyond API.md's procedures (server/queries/dashboard*.ts). */

/** Items per stage of the projects `inProjects` (a fragment over `w`) admits, one pass over them (STAGE_SQL gives a released or cancelled item its status). */
export async function countItemsByStage(db: Db, inProjects: Prisma.Sql): Promise<{ stage: Stage; n: number }[]> {
  return db.$queryRaw<{ stage: Stage; n: number }[]>`
    SELECT ${STAGE_SQL} AS stage, count(*)::int AS n FROM work_items w WHERE ${inProjects} GROUP BY 1`;
}

/** Items per project and stage, every project listed (at least the stages it has; the metrics gauges fill in zeros). */
export async function countItemsByProjectAndStage(db: Db): Promise<{ projectId: string; stage: Stage | null; n: number }[]> {
  return db.$queryRaw<{ projectId: string; stage: Stage | null; n: number }[]>`
    SELECT p.id AS "projectId", c.stage, coalesce(c.n, 0)::int AS n
      FROM projects p
      LEFT JOIN (SELECT w.project_id, ${STAGE_SQL} AS stage, count(*) AS n FROM work_items w GROUP BY 1, 2) c ON c.project_id = p.id
     ORDER BY p.id`;
}

/** Live leases, those expiring within 60 s, open attention requests, and the database clock, over the items `inProjects` admits. */
export async function countLeasesAndAttention(db: Db, inProjects: Prisma.Sql): Promise<{ activeLeases: number; expiring: number; openAttention: number; now: Date }> {
  const [totals] = await db.$queryRaw<{ activeLeases: number; expiring: number; openAttention: number; now: Date }[]>`
    SELECT count(*) FILTER (WHERE w.lease_expires_at > work_graph_now())::int AS "activeLeases",
           count(*) FILTER (WHERE w.lease_expires_at > work_graph_now()
                              AND w.lease_expires_at <= work_graph_now() + interval '60 seconds')::int AS expiring,
           (SELECT count(*)::int FROM attention_requests a JOIN work_items w ON w.id = a.work_item_id
             WHERE a.status = 'open' AND ${inProjects}) AS "openAttention",
           work_graph_now() AS now
      FROM work_items w WHERE w.lease_expires_at IS NOT NULL AND ${inProjects}`;
  return totals!;
}

/** STAGE_SQL's 'ready', through the claim index: claimable and its time gate open. */
const READY = Prisma.sql`${CLAIMABLE} AND ${OPEN_GATE}`;

/**
 * Ready items no agent could take (server/domain/unroutable.ts), of the projects `inProjects`
 * admits (READY), and the tokens are checked once per distinct (project, requires), not once per item.
 */
export async function countUnroutable(db: Db, inProjects: Prisma.Sql): Promise<number> {
  const [row] = await db.$queryRaw<{ n: number }[]>`
    SELECT coalesce(sum(w.n), 0)::int AS n FROM (
      SELECT w.project_id, w.requires, count(*) AS n FROM work_items w
       WHERE ${READY} AND ${inProjects} GROUP BY 1, 2) w
     WHERE NOT ${AN_AGENT_CAN_TAKE}`;
  return row!.n;
}

/** The first `limit` unroutable items in queue order, each with the capabilities no agent has. */
export async function selectUnroutable(db: Db, inProjects: Prisma.Sql, limit: number): Promise<(WorkItemRow & { missing: string[] })[]> {
  return db.$queryRaw<(WorkItemRow & { missing: string[] })[]>`
    SELECT ${WORK_ITEM_COLUMNS}, ${CAPABILITIES_NO_AGENT_HAS} AS missing FROM work_items w
     WHERE ${READY} AND ${inProjects} AND NOT ${AN_AGENT_CAN_TAKE}
     ORDER BY ${QUEUE_ORDER} LIMIT ${limit}`;
}

export type InboxRow = Parameters<typeof toAttentionRequest>[0] & { workItemTitle: string; workItemStage: Stage };

/** Attention requests of one status with their item's title and stage now: open ones oldest first, resolved ones most recently resolved first. */
export async function selectInbox(db: Db, status: "open" | "resolved", limit: number, inProjects: Prisma.Sql): Promise<InboxRow[]> {
  const order = status === "open" ? Prisma.sql`a.created_at, a.id` : Prisma.sql`a.resolved_at DESC, a.id`;
  return db.$queryRaw<InboxRow[]>`
    SELECT ${ATTENTION_COLUMNS}, w.title AS "workItemTitle", ${STAGE_SQL} AS "workItemStage"
      FROM attention_requests a JOIN work_items w ON w.id = a.work_item_id
     WHERE a.status = ${status} AND ${inProjects}
     ORDER BY ${order} LIMIT ${limit}`;
}

/** An item as the dashboard shows it next to another one: id, title and current stage. */
export interface ItemRef {
  id: string;
  title: string;
  stage: Stage;
}

const REF = Prisma.sql`w.id, w.title, ${STAGE_SQL} AS stage`;

export interface WaitingRow {
  waitingOn: WaitingStage[];
  openChildCount: number;
  lease: { id: string; workerId: string; epoch: number; expiresAt: Date } | null;
  notBefore: Date | null;
}

/** What keeps item `id` from being ready (WAITING_ON_SQL), its open child count and its live lease; undefined when it does not exist. */
export async function selectWaiting(db: Db, id: string): Promise<WaitingRow | undefined> {
  const [state] = await db.$queryRaw<WaitingRow[]>`
    SELECT ${WAITING_ON_SQL} AS "waitingOn", w.open_child_count AS "openChildCount", w.not_before AS "notBefore",
           (SELECT json_build_object('id', l.id, 'workerId', l.worker_id, 'epoch', l.epoch, 'expiresAt', l.expires_at)
              FROM leases l WHERE l.id = w.current_lease_id AND w.lease_expires_at > work_graph_now()) AS lease
      FROM work_items w WHERE w.id = ${id}`;
  return state;
}

/** The item's ancestors, parent first (depth 1), up to the root. */
export async function selectAncestors(db: Db, id: string): Promise<(ItemRef & { depth: number })[]> {
  return db.$queryRaw<(ItemRef & { depth: number })[]>`
    WITH RECURSIVE chain(id, depth) AS (
      SELECT parent_id, 1 FROM work_items WHERE id = ${id} AND parent_id IS NOT NULL
      UNION ALL
      SELECT w.parent_id, c.depth + 1 FROM chain c JOIN work_items w ON w.id = c.id
       WHERE w.parent_id IS NOT NULL AND c.depth < 10000
    )
    SELECT ${REF}, c.depth FROM chain c JOIN work_items w ON w.id = c.id ORDER BY c.depth`;
}

/** The item's direct blockers of the projects `inProjects` (over `w`) admits, by id. */
export async function selectBlockers(db: Db, id: string, inProjects: Prisma.Sql): Promise<ItemRef[]> {
  return db.$queryRaw<ItemRef[]>`
    SELECT ${REF} FROM dependencies d JOIN work_items w ON w.id = d.depends_on_id
     WHERE d.work_item_id = ${id} AND ${inProjects} ORDER BY w.id`;
}

/** The first `limit` items of the projects `inProjects` admits that depend on the item, by id. */
export async function selectDependents(db: Db, id: string, limit: number, inProjects: Prisma.Sql): Promise<ItemRef[]> {
  return db.$queryRaw<ItemRef[]>`
    SELECT ${REF} FROM dependencies d JOIN work_items w ON w.id = d.work_item_id
     WHERE d.depends_on_id = ${id} AND ${inProjects} ORDER BY w.id LIMIT ${limit}`;
}

/** The item's first `limit` children (only the open ones with `openOnly`), oldest first. */
export async function selectChildren(db: Db, id: string, limit: number, openOnly = false): Promise<ItemRef[]> {
  return db.$queryRaw<ItemRef[]>`
    SELECT ${REF} FROM work_items w WHERE w.parent_id = ${id} ${openOnly ? Prisma.sql`AND w.status = 'open'` : Prisma.empty}
     ORDER BY w.created_at, w.id LIMIT ${limit}`;
}

export async function countChildren(db: Db, id: string): Promise<number> {
  const [row] = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM work_items WHERE parent_id = ${id}`;
  return row?.n ?? 0;
}

export async function countDependents(db: Db, id: string, inProjects: Prisma.Sql): Promise<number> {
  const [row] = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM dependencies d JOIN work_items w ON w.id = d.work_item_id WHERE d.depends_on_id = ${id} AND ${inProjects}`;
  return row?.n ?? 0;
}

/** The open blockers of the given ancestors, by ancestor then id. */
export async function selectAncestorBlockers(db: Db, ancestorIds: string[], inProjects: Prisma.Sql): Promise<(ItemRef & { ancestorId: string })[]> {
  return db.$queryRaw<(ItemRef & { ancestorId: string })[]>`
    SELECT d.work_item_id AS "ancestorId", ${REF} FROM dependencies d JOIN work_items w ON w.id = d.depends_on_id
     WHERE d.work_item_id = ANY(${ancestorIds}::text[]) AND w.status = 'open' AND ${inProjects} ORDER BY d.work_item_id, w.id`;
}

/** The item's open blocking attention requests, oldest first. */
export async function selectOpenBlockingRequests(db: Db, id: string): Promise<{ id: string; question: string; workerId: string; createdAt: Date }[]> {
  return db.$queryRaw<{ id: string; question: string; workerId: string; createdAt: Date }[]>`
    SELECT a.id::text AS id, a.question, a.worker_id AS "workerId", a.created_at AS "createdAt" FROM attention_requests a
     WHERE a.work_item_id = ${id} AND a.status = 'open' AND a.blocking ORDER BY a.created_at, a.id`;
}
