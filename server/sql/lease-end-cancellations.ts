import type { Tx } from "../database/transaction";

/*
 * Items to cancel when their live lease ends other than by a release (rule 5: a lease is never
 * pre-empted), asked for by an integration; honoured by server/operations/lease-end-cancellation.ts.
 */

export interface LeaseEndCancellation {
  workItemId: string;
  /** The actor of the cancellation's events. */
  requestedBy: string;
  /** The reason its `work_item.status_changed` event records. */
  reason: string;
}

/** Asks for item `workItemId` to be cancelled when its lease ends; a later request replaces an earlier one. */
export async function insertLeaseEndCancellation(tx: Tx, request: LeaseEndCancellation): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO lease_end_cancellations (work_item_id, requested_by, reason) VALUES (${request.workItemId}, ${request.requestedBy}, ${request.reason})
    ON CONFLICT (work_item_id) DO UPDATE SET requested_by = EXCLUDED.requested_by, reason = EXCLUDED.reason`;
}

/**
 * Of the given (locked) items, those with a cancellation request which are still open with no
 * live lease now: their requests are taken (deleted) and returned.
 */
export async function takeDueLeaseEndCancellations(tx: Tx, itemIds: string[]): Promise<LeaseEndCancellation[]> {
  if (itemIds.length === 0) return [];
  return tx.$queryRaw<LeaseEndCancellation[]>`
    DELETE FROM lease_end_cancellations c USING work_items w
     WHERE c.work_item_id = ANY(${itemIds}::text[]) AND w.id = c.work_item_id
       AND w.status = 'open' AND w.current_lease_id IS NULL
    RETURNING c.work_item_id AS "workItemId", c.requested_by AS "requestedBy", c.reason`;
}
