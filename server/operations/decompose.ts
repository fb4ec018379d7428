import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { idempotencyScope } from "../domain/idempotency";
import type { Lease, WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toLease } from "../domain/views";
import { notFound } from "../errors";
import { lockCurrentLease } from "../sql/fencing";
import { lockGraphShape } from "../sql/graph";
import { idempotent } from "./idempotent";
import { endLease } from "../sql/leases";
import { insertWorkItems, selectWorkItem, selectWorkItemsById, type NewWorkItem } from "../sql/work-items";
import { claimNamedItem } from "./claim";
import { cancelWhereLeaseEnded } from "./lease-end-cancellation";

export interface DecomposeInput {
  leaseId: string;
  epoch: number;
  children: NewWorkItem[];
  claimChildId?: string;
  durationSeconds?: number;
  idempotencyKey?: string;
  workerId?: string;
}

export interface DecomposeResult {
  parent: WorkItem;
  children: WorkItem[];
  endedLease: Lease;
  childLease: Lease | null;
}

/**
 * One transaction: create the children under the leased item, end its lease as
 * `decomposed`, and optionally lease one child to the same worker. Any refusal rolls back all
 * of it and the parent's lease stays live. The parent then waits for its children and is never
 * completed automatically (rule 8 (the parent is never completed automatically)).
 */
export async function decompose(db: Db, caller: Caller, input: DecomposeInput): Promise<DecomposeResult> {
  return inTransaction(db, (tx) =>
    idempotent(tx, idempotencyScope(caller, input.workerId), input.idempotencyKey, "leases.decompose", input, async () => {
      await lockGraphShape(tx);
      const { lease, item } = await lockCurrentLease(tx, caller, input.leaseId, input.epoch, input.workerId);
      const childIds = await insertWorkItems(tx, item.id, input.children, lease.workerId, { scope: caller.projects });
      const ended = await endLease(tx, lease, "decomposed", lease.workerId, { children: childIds });

      let childLease: Lease | null = null;
      if (input.claimChildId !== undefined) {
        if (!childIds.includes(input.claimChildId)) throw notFound("child in this decomposition", input.claimChildId);
        // A new child has never been leased, so no expiry can send it to a person on the way.
        childLease = (await claimNamedItem(tx, input.claimChildId, lease.workerId, input.durationSeconds ?? 900))!.lease;
      }
      await cancelWhereLeaseEnded(tx, [item.id]);
      return {
        parent: (await selectWorkItem(tx, item.id))!,
        children: await selectWorkItemsById(tx, childIds),
        endedLease: toLease(ended),
        childLease,
      };
    }),
  );
}
