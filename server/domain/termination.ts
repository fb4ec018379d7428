import type { Tx } from "../database/transaction";
import { WorkGraphError } from "../errors";
import { appendEvents } from "./events";
import { endExpiredLeases } from "./expiry";
import { onItemTerminated } from "./readiness";

interface SubtreeItem {
  id: string;
  parentId: string | null;
  live: boolean;
  leaseId: string | null;
  depth: number;
}

/**
 * Makes `root` terminal (`released` or `cancelled`) and propagates readiness. Cancelling also
 * cancels every open descendant, deepest first, because a cancelled parent would otherwise
 * leave children nobody is waiting for; releasing changes only the root. No pre-emption
 * (rule 5): if a descendant to cancel holds a live lease, nothing changes and ITEM_LEASED is
 * raised. The caller has locked `root` and ended or checked its lease.
 */
export async function terminateSubtree(
  tx: Tx,
  root: { id: string; parentId: string | null },
  status: "released" | "cancelled",
  actor: string,
  data: Record<string, unknown>,
): Promise<void> {
  const descendants = status === "cancelled"
    ? await tx.$queryRaw<SubtreeItem[]>`
        WITH RECURSIVE sub(id, depth) AS (
          SELECT c.id, 1 FROM work_items c WHERE c.parent_id = ${root.id} AND c.status = 'open'
          UNION ALL
          SELECT c.id, s.depth + 1 FROM sub s JOIN work_items c ON c.parent_id = s.id WHERE c.status = 'open'
        )
        SELECT w.id, w.parent_id AS "parentId", (w.lease_expires_at > clock_timestamp()) IS TRUE AS live,
               w.current_lease_id::text AS "leaseId", sub.depth
          FROM work_items w JOIN sub ON sub.id = w.id
         ORDER BY w.id FOR UPDATE OF w`
    : [];
  const leased = descendants.find((item) => item.live);
  if (leased) {
    throw new WorkGraphError("ITEM_LEASED", `descendant ${leased.id} has a live lease; it ends only by its worker or by expiry`, {
      workItemId: leased.id,
      leaseId: leased.leaseId,
    });
  }
  // Descendants whose lease ran out are recorded as expired before they are cancelled.
  await endExpiredLeases(tx, descendants.filter((item) => item.leaseId !== null).map((item) => item.id));
  const items = [...descendants.sort((a, b) => b.depth - a.depth), { ...root, depth: 0 }];
  for (const item of items) {
    await tx.$executeRaw`UPDATE work_items SET status = ${status}, updated_at = clock_timestamp() WHERE id = ${item.id}`;
    await onItemTerminated(tx, item.id, item.parentId);
  }
  await appendEvents(
    tx,
    items.map((item) => ({
      workItemId: item.id,
      type: "work_item.status_changed",
      actor,
      data: { from: "open", to: status, ...data, ...(item.id === root.id ? {} : { cascadedFrom: root.id }) },
    })),
  );
}
