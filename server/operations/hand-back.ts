import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { actingWorker } from "../domain/fencing";
import { HAND_BACK_ITEM_CHANGES } from "../domain/routing";
import type { Lease, WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toLease } from "../domain/views";
import { refuseStaleLease } from "../sql/fencing";
import { endLease } from "../sql/leases";
import { selectWorkItem } from "../sql/work-items";
import { cancelWhereLeaseEnded } from "./lease-end-cancellation";

export interface HandBackInput {
  leaseId: string;
  epoch: number;
  reason: string;
  retryAfterSeconds?: number;
  workerId?: string;
}

/**
 * Rule 16 (hand back): the worker gives the item back unfinished. Fenced like a release (rule
 * 2): the live lease ends as `returned` under the item's row lock, `lease.ended` carries the
 * reason and retryAfterSeconds, and with retryAfterSeconds the item is gated until database now
 * plus that many seconds (rule 15). The item stays open, ready or scheduled by the normal rules,
 * with no continuity preference for the worker that returned it. The `lease.ended` event wakes
 * waiting claims on every instance. A returned lease is not an expiry (rule 11: see
 * server/sql/repeated-expiry.ts).
 */
export async function handBack(db: Db, caller: Caller, input: HandBackInput): Promise<{ lease: Lease; workItem: WorkItem }> {
  return inTransaction(db, async (tx) => {
    const presented = { leaseId: input.leaseId, epoch: input.epoch, workerId: actingWorker(caller, input.workerId) };
    const data = { reason: input.reason, retryAfterSeconds: input.retryAfterSeconds ?? null };
    const ended = await endLease(tx, presented, "returned", caller.workerId ?? caller.actor, data, HAND_BACK_ITEM_CHANGES(input.retryAfterSeconds));
    if (!ended) return refuseStaleLease(tx, caller, input.leaseId, input.epoch, input.workerId);
    await cancelWhereLeaseEnded(tx, [ended.workItemId]);
    return { lease: toLease(ended), workItem: (await selectWorkItem(tx, ended.workItemId))! };
  });
}
