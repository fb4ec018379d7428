import { Prisma } from "../generated/prisma/client";
import { endLeasesSql } from "./leases";

/** Actor recorded on events the service causes by itself (expiry). */
export const SYSTEM_ACTOR = "system";

/** Worker id and event actor of what the service itself asks (rule 11 (repeated expiry goes to a person)). */
export const WORK_GRAPH_ACTOR = "work-graph";

/**
 * Rule 7 (expiry is recorded): CTEs ending the unended leases of the given (already locked)
 * items whose time has run out, as `expired` with endedAt = their expiresAt (endLeasesSql's
 * `l`, `w` and events). Reclaim and the background sweep both end expired leases with it
 * (server/sql/leases.ts endExpiredLeases), so both emit the same events.
 */
export const endExpiredLeasesSql = (itemIds: string[]) =>
  endLeasesSql({
    which: Prisma.sql`l.work_item_id = ANY(${itemIds}::text[]) AND l.expires_at <= work_graph_now()`,
    outcome: "expired",
    endedAt: Prisma.sql`l.expires_at`,
    actor: SYSTEM_ACTOR,
    data: Prisma.sql`jsonb_build_object('endedAt', l.expires_at)`,
  });

