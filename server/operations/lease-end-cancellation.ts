import type { Tx } from "../database/transaction";
import { WorkGraphError } from "../errors";
import { insertLeaseEndCancellation, takeDueLeaseEndCancellations } from "../sql/lease-end-cancellations";
import { cancelSubtree } from "./cancel-subtree";

/**
 * Rule 5: a cancellation asked for while an item is leased never pre-empts that lease (see
 * server/sql/lease-end-cancellations.ts). Called right after a lease of one of `itemIds`
 * (locked by the caller) ended other than by a release (hand back, revoke, blocking attention,
 * decomposition, expiry by sweep or reclaim): an item with a request is cancelled now, by whoever
 * asked, for their reason. Returns the ids cancelled. An item with a leased descendant stays
 * open (ITEM_LEASED is not raised) and its request stays pending.
 */
export async function cancelWhereLeaseEnded(tx: Tx, itemIds: string[]): Promise<string[]> {
  const cancelled: string[] = [];
  for (const request of await takeDueLeaseEndCancellations(tx, itemIds)) {
    try {
      await cancelSubtree(tx, { id: request.workItemId }, request.requestedBy, { reason: request.reason });
      cancelled.push(request.workItemId);
    } catch (error) {
      if (!(error instanceof WorkGraphError && error.reason === "ITEM_LEASED")) throw error;
      await insertLeaseEndCancellation(tx, request);
    }
  }
  return cancelled;
}
