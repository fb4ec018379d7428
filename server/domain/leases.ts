import { Prisma } from "../generated/prisma/client";
import type { LeaseOutcome } from "@work-graph/contract";

export interface EndLeases {
  /** WHERE over `leases l` choosing the live leases to end (may use CTEs named in `from`). */
  which: Prisma.Sql;
  /** Further FROM items for that WHERE, e.g. the locked `item` CTE. */
  from?: Prisma.Sql;
  outcome: LeaseOutcome;
  /** When each ended: the database clock now, unless given (expiry: the lease's own expiresAt). */
  endedAt?: Prisma.Sql;
  /** The `lease.ended` event's actor: a value, or SQL over the ended lease `l`. */
  actor: string | Prisma.Sql;
  /** jsonb merged into the event's data after { outcome, workerId }. */
  data?: Prisma.Sql;
  /** Further `, column = …` changes of the item row, in the same update (e.g. a counter). */
  itemChanges?: Prisma.Sql;
  /** Further events, logged right after `lease.ended`: a SELECT of (work_item_id, type, actor, lease_id, epoch, data). */
  thenLog?: Prisma.Sql;
}

/**
 * The one definition of "a lease ends" (rule 4 (immutable lease history): exactly one recorded outcome), as CTEs for a
 * caller's statement: `l` the ended leases (`RETURNING l.*`), `w` their items with the
 * current-lease fields cleared, the worker kept as previous worker and `updated_at` set
 * (`RETURNING w.*`), and one `lease.ended` event per lease (then the caller's `thenLog` events). Release, revoke, expiry and every
 * other ending (server/sql/leases.ts endLease) use it, each inside its own fused statement.
 */
export function endLeasesSql({ which, from, outcome, endedAt, actor, data, itemChanges, thenLog }: EndLeases): Prisma.Sql {
  const by = typeof actor === "string" ? Prisma.sql`${actor}::text` : actor;
  return Prisma.sql`
    l AS (
      UPDATE leases l SET ended_at = ${endedAt ?? Prisma.sql`work_graph_clock()`}, outcome = ${outcome}
        ${from ? Prisma.sql`FROM ${from}` : Prisma.empty}
       WHERE l.ended_at IS NULL AND ${which}
      RETURNING l.*
    ), w AS (
      UPDATE work_items w SET current_lease_id = NULL, lease_expires_at = NULL, previous_worker_id = l.worker_id,
             updated_at = work_graph_clock() ${itemChanges ?? Prisma.empty}
        FROM l WHERE w.id = l.work_item_id
      RETURNING w.*
    ), lease_ended AS (
      INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
      SELECT l.work_item_id, 'lease.ended', ${by}, l.id, l.epoch,
             jsonb_build_object('outcome', l.outcome, 'workerId', l.worker_id) || ${data ?? Prisma.sql`'{}'::jsonb`} FROM l
      ${thenLog ? Prisma.sql`UNION ALL ${thenLog}` : Prisma.empty}
    )`;
}
