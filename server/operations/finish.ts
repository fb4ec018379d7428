import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { lockCurrentLease } from "../domain/fencing";
import { terminateSubtree } from "../domain/termination";
import type { Caller, Lease, WorkItem } from "../domain/types";
import { LEASE_COLUMNS, selectWorkItem, toLease, type LeaseRow } from "../domain/views";

export interface ReleaseInput {
  leaseId: string;
  epoch: number;
  evidence: string;
  links?: string[];
  workerId?: string;
}

export interface CancelInput {
  leaseId: string;
  epoch: number;
  reason: string;
  workerId?: string;
}

/**
 * Release and cancel: the worker ends its lease with a final outcome and the item becomes
 * terminal, which can make dependents (and the parent) ready in this same transaction.
 */
async function finish(
  db: Db,
  caller: Caller,
  input: { leaseId: string; epoch: number; workerId?: string },
  outcome: "released" | "cancelled",
  data: Record<string, unknown>,
): Promise<{ lease: Lease; workItem: WorkItem }> {
  return inTransaction(db, async (tx) => {
    const { lease, item } = await lockCurrentLease(tx, caller, input.leaseId, input.epoch, input.workerId);
    const [ended] = await tx.$queryRaw<LeaseRow[]>`
      WITH l AS (
        UPDATE leases SET ended_at = clock_timestamp(), outcome = ${outcome} WHERE id = ${lease.id}::uuid RETURNING *
      ), item AS (
        UPDATE work_items w SET current_lease_id = NULL, lease_expires_at = NULL, previous_worker_id = l.worker_id
          FROM l WHERE w.id = l.work_item_id
      ), logged AS (
        INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
        SELECT l.work_item_id, 'lease.ended', l.worker_id, l.id, l.epoch,
               jsonb_build_object('outcome', l.outcome, 'workerId', l.worker_id) || ${JSON.stringify(data)}::jsonb FROM l
      )
      SELECT ${LEASE_COLUMNS} FROM l`;
    await terminateSubtree(tx, item, outcome, lease.workerId, { leaseId: lease.id, epoch: lease.epoch, ...data });
    return { lease: toLease(ended!), workItem: (await selectWorkItem(tx, item.id))! };
  });
}

export const release = (db: Db, caller: Caller, input: ReleaseInput) =>
  finish(db, caller, input, "released", { evidence: input.evidence, links: input.links ?? [] });

export const cancel = (db: Db, caller: Caller, input: CancelInput) =>
  finish(db, caller, input, "cancelled", { reason: input.reason });
