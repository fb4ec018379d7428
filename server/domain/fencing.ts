import { Prisma } from "../generated/prisma/client";
import type { Caller } from "./types";

/*
 * Fencing's SQL fragments (API.md rule 2 (fencing: only the live lease writes) and rule 3
 * (fencing: the epoch only grows)); the statements built from them are in
 * server/sql/fencing.ts, server/sql/leases.ts and server/sql/claims.ts.
 */

export const LOCKED_ITEM_COLUMNS = Prisma.sql`id, parent_id AS "parentId", status, last_epoch AS "lastEpoch", priority`;

/** CTE `item`: the presented lease's work item, row-locked (the lock rule 2 (fencing) checks under). */
export const lockLeaseItem = (leaseId: string) => Prisma.sql`
  item AS (SELECT id, parent_id, last_epoch FROM work_items
            WHERE id = (SELECT work_item_id FROM leases WHERE id = ${leaseId}::uuid) FOR UPDATE)`;

/**
 * Over `leases l` joined with CTE `item`: the presented lease id + epoch is the item's live
 * lease (unended, no newer epoch, expiresAt > database now, strictly), held by `workerId`
 * when one is given. Used as the WHERE of a fenced UPDATE, which re-reads the row after the
 * lock, so a statement that changes nothing was refused: ask refuseStaleLease why.
 */
export const isLiveLease = (leaseId: string, epoch: number, workerId: string | null | undefined) => Prisma.sql`
  l.id = ${leaseId}::uuid AND l.epoch = ${epoch} AND l.work_item_id = item.id AND item.last_epoch = l.epoch
  AND l.ended_at IS NULL AND l.expires_at > work_graph_clock()
  ${workerId ? Prisma.sql`AND l.worker_id = ${workerId}` : Prisma.empty}`;

/**
 * Rule 3 (fencing: the epoch only grows): a new lease's epoch is the item's highest epoch + 1,
 * over CTE `picked(id, last_epoch)` of the item being leased.
 */
export const NEXT_EPOCH = Prisma.sql`picked.last_epoch + 1`;

/** The worker a lease-bound call acts for: an agent's own worker, or the one an admin named. */
export const actingWorker = (caller: Caller, requestedWorkerId?: string) =>
  caller.role === "agent" ? caller.workerId : requestedWorkerId;
