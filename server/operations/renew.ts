import type { Db } from "../db";
import { inTransaction, retryingConflicts } from "../database/transaction";
import { actingWorker } from "../domain/fencing";
import type { Lease } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toLease } from "../domain/views";
import { announceQuietCommit } from "../realtime/wakeups";
import { leaseOutsideScope, refuseStaleLease } from "../sql/fencing";
import { renewIfCurrent } from "../sql/leases";

export interface RenewInput {
  leaseId: string;
  epoch: number;
  durationSeconds: number;
  workerId?: string;
}

/**
 * New expiry = database now + duration (it may shorten the lease). An expired lease cannot be
 * revived: fencing refuses it. One autocommit statement (renewals are frequent: the MCP server
 * renews every third of a lease); a refusal is classified afterwards, under the item's lock.
 */
export async function renew(db: Db, caller: Caller, input: RenewInput): Promise<Lease> {
  const presented = { leaseId: input.leaseId, epoch: input.epoch, workerId: actingWorker(caller, input.workerId) };
  const outside = await leaseOutsideScope(db, caller, input.leaseId);
  const renewed = outside ? null : await retryingConflicts(() => renewIfCurrent(db, presented, input.durationSeconds));
  if (!renewed) return inTransaction(db, (tx) => refuseStaleLease(tx, caller, input.leaseId, input.epoch, input.workerId));
  announceQuietCommit(db);
  return toLease(renewed);
}
