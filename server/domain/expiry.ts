import { Prisma } from "../generated/prisma/client";
import type { Tx } from "../database/transaction";
import { countLeasesEnded } from "../metrics";
import { endLeasesSql } from "./leases";

/** Actor recorded on events the service causes by itself (expiry). */
export const SYSTEM_ACTOR = "system";

/**
 * Rule 7: ends the unended leases of the given (already locked) items whose time has run out,
 * as `expired` with endedAt = their expiresAt, and clears them from their items. Used by
 * reclaim and by the background sweep, so both emit the same events. Returns the ended leases.
 */
export async function endExpiredLeases(tx: Tx, itemIds: string[]): Promise<{ id: string; workItemId: string }[]> {
  if (itemIds.length === 0) return [];
  const ended = await tx.$queryRaw<{ id: string; workItemId: string; acquiredAt: Date; endedAt: Date }[]>`
    WITH ${endLeasesSql({
      which: Prisma.sql`l.work_item_id = ANY(${itemIds}::text[]) AND l.expires_at <= statement_timestamp()`,
      outcome: "expired",
      endedAt: Prisma.sql`l.expires_at`,
      actor: SYSTEM_ACTOR,
      data: Prisma.sql`jsonb_build_object('endedAt', l.expires_at)`,
    })}
    SELECT id::text, work_item_id AS "workItemId", acquired_at AS "acquiredAt", ended_at AS "endedAt" FROM l`;
  countLeasesEnded(tx, "expired", ended);
  return ended;
}
