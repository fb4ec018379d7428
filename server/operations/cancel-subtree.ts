import type { Tx } from "../database/transaction";
import { WorkGraphError } from "../errors";
import { endExpiredLeases } from "../sql/leases";
import { lockCounterNeighbours, lockOpenDescendants, markCancelled, releaseCountersOf, releaseInheritedBlockersOf } from "../sql/termination";

/**
 * Cancels `root` and every open descendant — also those below a released or cancelled item (a
 * child created under a leased item stays open when that item is released) — and propagates
 * readiness. Set-based: a fixed handful of statements whatever the size of the subtree.
 * Rule 5 (no pre-emption): if a descendant to cancel holds a live lease, nothing changes and
 * ITEM_LEASED is raised. The caller has locked `root` and ended or checked its lease.
 */
export async function cancelSubtree(tx: Tx, root: { id: string }, actor: string, data: Record<string, unknown>): Promise<void> {
  const descendants = await lockOpenDescendants(tx, root.id);
  const leased = descendants.find((item) => item.live);
  if (leased) {
    throw new WorkGraphError("ITEM_LEASED", `descendant ${leased.id} has a live lease; it ends only by its worker or by expiry`, {
      workItemId: leased.id,
      leaseId: leased.leaseId,
    });
  }
  // Descendants whose lease ran out are recorded as expired before they are cancelled.
  await endExpiredLeases(tx, descendants.filter((item) => item.leaseId !== null).map((item) => item.id));
  const ids = [root.id, ...descendants.map((item) => item.id)];
  await lockCounterNeighbours(tx, ids);
  await markCancelled(tx, ids, root.id, actor, data);
  await releaseCountersOf(tx, ids);
  await releaseInheritedBlockersOf(tx, ids);
}
