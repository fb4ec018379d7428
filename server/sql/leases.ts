import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import { queryHotPath } from "./hot-path";
import { staticSql, sqlParameter } from "./static-sql";
import type { Tx } from "../database/transaction";
import type { LeaseOutcome } from "@work-graph/contract";
import { endExpiredLeasesSql } from "../domain/expiry";
import { isLiveLease, lockLeaseItem } from "../domain/fencing";
import { itemInProjects } from "../domain/scope";
import type { Caller } from "../domain/types";
import { endLeasesSql } from "../domain/leases";
import { HAS_UNBLOCKED, MAY_HAVE_READIED, PROPAGATE_TERMINATION, SHIFT_BELOW_UNBLOCKED } from "../domain/readiness";
import { EVENTS_CHANNEL, QUIET_EVENTS_SETTING } from "./notifications";
import { LEASE_COLUMNS, WORK_ITEM_COLUMNS, type LeaseRow, type WorkItemRow } from "../domain/views";
import { countLeaseEnded, countLeasesEnded } from "../metrics";

/*
 * The statements of a lease's life after its claim (server/sql/claims.ts): renewal, release,
 * every other ending, expiry, and the reads of lease rows.
 */

/** A lease as presented by a lease-bound call, fenced inside the statement that acts on it (rule 2 (fencing)). */
export interface PresentedLease {
  leaseId: string;
  epoch: number;
  /** The worker it must belong to; null or undefined: any. */
  workerId: string | null | undefined;
}

/**
 * Renews the lease if it is the item's live lease: new expiry = database now + duration (it may
 * shorten the lease), `lease.renewed` logged. One statement (renewals are frequent); undefined
 * when the fencing refused it (refuseStaleLease says why).
 */
export async function renewIfCurrent(db: Db, presented: PresentedLease, durationSeconds: number): Promise<LeaseRow | undefined> {
  const [renewed] = await queryHotPath<LeaseRow>(db, Prisma.sql`
    WITH ${lockLeaseItem(presented.leaseId)},
    l AS (
      UPDATE leases l SET expires_at = work_graph_clock() + make_interval(secs => ${durationSeconds}), renewed_at = work_graph_clock()
        FROM item WHERE ${isLiveLease(presented.leaseId, presented.epoch, presented.workerId)}
      RETURNING l.*
    ), w AS (
      UPDATE work_items w SET lease_expires_at = l.expires_at FROM l WHERE w.id = l.work_item_id
    ), logged AS (
      INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
      SELECT l.work_item_id, 'lease.renewed', l.worker_id, l.id, l.epoch, jsonb_build_object('expiresAt', l.expires_at) FROM l
    )
    SELECT ${LEASE_COLUMNS} FROM l`);
  return renewed;
}

/** A release as release_lease returns it; `announced`: its commit notified (see RELEASE_LEASE_FUNCTION). */
export interface Released {
  lease: LeaseRow;
  workItem: WorkItemRow;
  announced: boolean;
}

/**
 * Releases the lease if it is the item's live lease: one call of release_lease
 * (RELEASE_LEASE_FUNCTION), one round trip. Null when the fencing refused it.
 */
export async function releaseIfCurrent(db: Db, presented: PresentedLease, data: string): Promise<Released | null> {
  const [row] = await queryHotPath<{ released: Released | null }>(db, Prisma.sql`
    SELECT release_lease(${presented.leaseId}::uuid, ${presented.epoch}::int, ${presented.workerId ?? null}::text, ${data}::jsonb) AS released`);
  return row?.released ?? null;
}

/**
 * The release_lease function releaseIfCurrent calls, as the migration that defines it must
 * contain it (tests/database/generated-functions.test.ts; `npx tsx scripts/generated-sql.ts`
 * prints it). Built from the same fragments as every other lease ending and readiness change.
 * Its statements, each with a fresh snapshot:
 *   1. lock_for_release (migration 20261203160000): the item's row lock, then its dependents'
 *      in id order (the global lock order: two releases with shared dependents would otherwise
 *      update them in join order and could deadlock). Had the fused statement waited for the
 *      item itself (a new dependency on it holds it FOR SHARE until it commits), its snapshot
 *      would miss that committed edge and leave the dependent blocked by a released item.
 *   2. The fused statement: fenced lease end, item released, dependents and parent unblocked.
 *   3. When it unblocked any dependent, SHIFT_BELOW_UNBLOCKED in a statement of its own: had
 *      the one above waited for a dependent's row (a move or a new child under it), its
 *      snapshot would not show the subtree that dependent has now.
 * Its events do not notify one by one (QUIET_EVENTS_SETTING): PostgreSQL serializes every
 * notifying commit through its WAL flush, and most releases make nothing claimable. The
 * function notifies, in the same commit, only when the release may have readied work
 * (MAY_HAVE_READIED) or freed a slot under a concurrency key's limit (rule 14), and says so in
 * `announced`; otherwise the app relays the commit to other instances' event streams after it
 * (server/realtime/relay.ts).
 */
export const RELEASE_LEASE_FUNCTION = `CREATE OR REPLACE FUNCTION "release_lease"("p_lease" UUID, "p_epoch" INTEGER, "p_worker" TEXT, "p_data" JSONB)
RETURNS JSON LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    "released" JSON;
    "unblocked_any" BOOLEAN;
BEGIN
    PERFORM set_config('${QUIET_EVENTS_SETTING}', 'on', true);
    PERFORM lock_for_release("p_lease");
${staticSql(Prisma.sql`
    WITH ${lockLeaseItem(sqlParameter(`"p_lease"`))},
    ${endLeasesSql({
      from: Prisma.sql`item`,
      which: isLiveLease(sqlParameter(`"p_lease"`), sqlParameter<number>(`"p_epoch"`), sqlParameter(`coalesce("p_worker", l.worker_id)`)),
      outcome: "released",
      actor: Prisma.sql`l.worker_id`,
      data: Prisma.sql`"p_data"`,
      itemChanges: Prisma.sql`, status = 'released'`,
      thenLog: Prisma.sql`SELECT l.work_item_id, 'work_item.status_changed', l.worker_id, l.id, l.epoch,
                                 jsonb_build_object('from', 'open', 'to', 'released') || "p_data" FROM l`,
    })},
    done AS (SELECT id, parent_id, updated_at AS at FROM w),
    ${PROPAGATE_TERMINATION}
    SELECT json_build_object('lease', (SELECT row_to_json(x) FROM (SELECT ${LEASE_COLUMNS} FROM l) x),
                             'workItem', (SELECT row_to_json(x) FROM (SELECT ${WORK_ITEM_COLUMNS} FROM w) x),
                             'announced', ${MAY_HAVE_READIED} OR l.concurrency_key IS NOT NULL),
           ${HAS_UNBLOCKED}
      INTO "released", "unblocked_any"
      FROM l;`)}
    IF "unblocked_any" THEN
${staticSql(Prisma.sql`${SHIFT_BELOW_UNBLOCKED(sqlParameter(`("released"->'lease'->>'workItemId')`))};`)}
    END IF;
    PERFORM set_config('${QUIET_EVENTS_SETTING}', 'off', true);
    IF ("released"->>'announced')::boolean THEN
        PERFORM pg_notify('${EVENTS_CHANNEL}', 'lease.ended'), pg_notify('${EVENTS_CHANNEL}', 'work_item.status_changed');
    END IF;
    RETURN "released";
END $$;`;

/**
 * Ends a live lease now (database clock) with `outcome`, in one statement, by `actor` with
 * `data` on its event (rule 4 (one recorded outcome), endLeasesSql); `itemChanges` go into the
 * same update of the item row. Given `{ id }`, the caller has fenced and locked the lease
 * (lockCurrentLease) and gets the ended lease. Given a PresentedLease, the statement locks the
 * item and fences the lease itself and returns undefined when it was refused (refuseStaleLease
 * says why).
 */
export async function endLease(tx: Tx, lease: { id: string }, outcome: LeaseOutcome, actor: string, data?: Record<string, unknown>, itemChanges?: Prisma.Sql): Promise<LeaseRow>;
export async function endLease(tx: Tx, lease: PresentedLease, outcome: LeaseOutcome, actor: string, data?: Record<string, unknown>, itemChanges?: Prisma.Sql): Promise<LeaseRow | undefined>;
export async function endLease(
  tx: Tx,
  lease: { id: string } | PresentedLease,
  outcome: LeaseOutcome,
  actor: string,
  data: Record<string, unknown> = {},
  itemChanges: Prisma.Sql = Prisma.empty,
): Promise<LeaseRow | undefined> {
  const ending = { outcome, actor, data: Prisma.sql`${JSON.stringify(data)}::jsonb`, itemChanges };
  if ("leaseId" in lease) {
    const [ended] = await tx.$queryRaw<LeaseRow[]>`
      WITH ${lockLeaseItem(lease.leaseId)},
      ${endLeasesSql({ ...ending, from: Prisma.sql`item`, which: isLiveLease(lease.leaseId, lease.epoch, lease.workerId) })}
      SELECT ${LEASE_COLUMNS} FROM l`;
    if (ended) countLeaseEnded(tx, ended);
    return ended;
  }
  const [ended] = await tx.$queryRaw<LeaseRow[]>`
    WITH ${endLeasesSql({ ...ending, which: Prisma.sql`l.id = ${lease.id}::uuid` })}
    SELECT ${LEASE_COLUMNS} FROM l`;
  if (!ended) throw new Error(`lease ${lease.id} was not live when ending it as ${outcome}`);
  countLeaseEnded(tx, ended);
  return ended;
}

/**
 * Rule 7 (expiry is recorded): ends the unended leases of the given (already locked) items
 * whose time has run out, as `expired` with endedAt = their expiresAt, and clears them from
 * their items (endExpiredLeasesSql). Used by reclaim and by the background sweep, so both emit
 * the same events. Returns the ended leases.
 */
export async function endExpiredLeases(tx: Tx, itemIds: string[]): Promise<{ id: string; workItemId: string }[]> {
  if (itemIds.length === 0) return [];
  const ended = await tx.$queryRaw<{ id: string; workItemId: string; acquiredAt: Date; endedAt: Date }[]>`
    WITH ${endExpiredLeasesSql(itemIds)}
    SELECT id::text, work_item_id AS "workItemId", acquired_at AS "acquiredAt", ended_at AS "endedAt" FROM l`;
  countLeasesEnded(tx, "expired", ended);
  return ended;
}

/**
 * The sweep's batch (rule 7 (expiry is recorded)): up to `batch` items whose lease has run out, oldest expiry
 * first, locked with SKIP LOCKED so several app instances sweep one database without ending a
 * lease twice or waiting for each other; a reclaim in flight simply wins.
 */
export async function lockExpiredDue(tx: Tx, batch: number): Promise<string[]> {
  const due = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM work_items
     WHERE lease_expires_at <= work_graph_now()
     ORDER BY lease_expires_at
     LIMIT ${batch}
       FOR UPDATE SKIP LOCKED`;
  return due.map((row) => row.id);
}

/** Work item `itemId`'s unended lease, if it has one (expired ones were ended by the caller). */
export async function unendedLeaseOf(tx: Tx, itemId: string): Promise<{ leaseId: string; workerId: string; expiresAt: Date } | undefined> {
  const [lease] = await tx.$queryRaw<{ leaseId: string; workerId: string; expiresAt: Date }[]>`
    SELECT l.id::text AS "leaseId", l.worker_id AS "workerId", l.expires_at AS "expiresAt"
      FROM work_items w JOIN leases l ON l.id = w.current_lease_id WHERE w.id = ${itemId}`;
  return lease;
}

/** Leases ended in the last hour, per outcome, on items in `caller`'s scope (rule 12). */
export async function countLeasesEndedLastHour(db: Db, caller: Pick<Caller, "projects">): Promise<{ outcome: LeaseOutcome; n: number }[]> {
  return db.$queryRaw<{ outcome: LeaseOutcome; n: number }[]>`
    SELECT outcome, count(*)::int AS n FROM leases l
     WHERE l.ended_at > work_graph_now() - interval '1 hour' ${itemInProjects(caller.projects, Prisma.raw("l.work_item_id"))}
     GROUP BY outcome`;
}

export async function findLease(db: Db, leaseId: string): Promise<LeaseRow | undefined> {
  const [row] = await db.$queryRaw<LeaseRow[]>`SELECT ${LEASE_COLUMNS} FROM leases l WHERE l.id = ${leaseId}::uuid`;
  return row;
}

/** Live leases, soonest expiry first, at most `limit`, of one worker when given; after lease `after` when given. */
export async function selectLiveLeases(
  db: Db,
  input: { workerId?: string; limit: number; after?: string; inProjects: Prisma.Sql },
): Promise<(LeaseRow & { workItemTitle: string; secondsLeft: number })[]> {
  return db.$queryRaw<(LeaseRow & { workItemTitle: string; secondsLeft: number })[]>`
    SELECT ${LEASE_COLUMNS}, w.title AS "workItemTitle",
           round(extract(epoch FROM l.expires_at - work_graph_now())::numeric, 3)::float8 AS "secondsLeft"
      FROM leases l JOIN work_items w ON w.id = l.work_item_id
     WHERE l.ended_at IS NULL AND l.expires_at > work_graph_now() AND ${input.inProjects}
       ${input.workerId ? Prisma.sql`AND l.worker_id = ${input.workerId}` : Prisma.empty}
       ${input.after ? Prisma.sql`AND (l.expires_at, l.id) > (SELECT p.expires_at, p.id FROM leases p WHERE p.id = ${input.after}::uuid)` : Prisma.empty}
     ORDER BY l.expires_at, l.id LIMIT ${input.limit}`;
}

/** The `limit` most recently ended leases on items `inProjects` (over `w`) admits, of one worker when given. */
export async function selectRecentlyEndedLeases(db: Db, limit: number, inProjects: Prisma.Sql, workerId?: string): Promise<(LeaseRow & { workItemTitle: string })[]> {
  return db.$queryRaw<(LeaseRow & { workItemTitle: string })[]>`
    SELECT ${LEASE_COLUMNS}, w.title AS "workItemTitle"
      FROM leases l JOIN work_items w ON w.id = l.work_item_id
     WHERE l.ended_at IS NOT NULL AND ${inProjects} ${workerId ? Prisma.sql`AND l.worker_id = ${workerId}` : Prisma.empty}
     ORDER BY l.ended_at DESC, l.id LIMIT ${limit}`;
}

/** Every lease of an item, by epoch. */
export async function selectLeasesOfItem(db: Db, workItemId: string): Promise<LeaseRow[]> {
  return db.$queryRaw<LeaseRow[]>`SELECT ${LEASE_COLUMNS} FROM leases l WHERE l.work_item_id = ${workItemId} ORDER BY l.epoch`;
}

/** Milliseconds until the earliest live lease expires (database clock), or null when no lease is live. */
export async function msUntilNextLeaseExpiry(db: Db): Promise<number | null> {
  const [row] = await db.$queryRaw<{ ms: number | null }[]>`
    SELECT (extract(epoch FROM min(lease_expires_at) - work_graph_clock()) * 1000)::float8 AS ms
      FROM work_items WHERE lease_expires_at > work_graph_now()`;
  return row?.ms ?? null;
}
