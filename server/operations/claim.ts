import type { Db } from "../db";
import { inTransaction, retryingConflicts, type Tx } from "../database/transaction";
import { workerDrained } from "../domain/draining";
import { idempotencyScope } from "../domain/idempotency";
import type { AttentionRequest, Caller, Lease, WorkItem } from "../domain/types";
import { toAttentionRequest, toLease, toWorkItem } from "../domain/views";
import { notFound, WorkGraphError } from "../errors";
import { countClaim, timeClaim } from "../metrics";
import { announceLocally } from "../realtime/wakeups";
import { claimNext, leaseLockedItem, lockNamedItemStage, type ClaimRow } from "../sql/claims";
import { idempotent } from "../sql/idempotency";
import { endExpiredLeases } from "../sql/leases";
import { sendRepeatedExpiriesToPerson } from "../sql/repeated-expiry";
import { refuseDrainedWorker } from "../sql/workers";

export interface ClaimInput {
  workItemId?: string;
  parentId?: string;
  durationSeconds: number;
  idempotencyKey?: string;
}

export interface ClaimResult {
  lease: Lease;
  workItem: WorkItem;
  /** Attention requests raised under the item's previous lease, with their answers, for the resuming worker. */
  attention: AttentionRequest[];
}

function toClaimResult(row: ClaimRow): ClaimResult {
  const lease = toLease(row.lease);
  return {
    lease,
    workItem: { ...toWorkItem(row.workItem), stage: "leased", currentLease: lease },
    attention: row.attention.map(toAttentionRequest),
  };
}

/**
 * Leases an item this transaction has locked: ends an expired lease on it first (rule 7
 * (expiry is recorded)). Null when that expiry sent the item to a person instead (rule 11
 * (repeated expiry goes to a person)).
 */
async function endExpiryThenLease(tx: Tx, itemId: string, workerId: string, durationSeconds: number): Promise<ClaimResult | null> {
  const expired = await endExpiredLeases(tx, [itemId]);
  if ((await sendRepeatedExpiriesToPerson(tx, expired.map((lease) => lease.workItemId))).length > 0) return null;
  return countClaim(tx, toClaimResult(await leaseLockedItem(tx, itemId, workerId, durationSeconds)));
}

/**
 * Next claim as one statement (server/sql/claims.ts claimNext). `pickedId` without `claimed`:
 * the item found still carries an expired, unended lease, which must be ended first.
 */
async function leaseNextClaimable(
  db: Db | Tx, workerId: string, parentId: string | undefined, durationSeconds: number,
): Promise<{ pickedId: string | null; claimed: ClaimResult | null }> {
  const row = await claimNext(db, workerId, parentId, durationSeconds);
  if (row.drained) throw workerDrained(workerId, row.drained);
  return { pickedId: row.pickedId, claimed: row.lease ? countClaim(db, toClaimResult(row as ClaimRow)) : null };
}

/**
 * Next claim in a transaction (an idempotency key, or an expired lease to end first). An item
 * sent to a person on the way is no longer claimable, so the next probe skips it.
 */
async function claimNextInTransaction(tx: Tx, workerId: string, parentId: string | undefined, durationSeconds: number): Promise<ClaimResult | null> {
  const { pickedId, claimed } = await leaseNextClaimable(tx, workerId, parentId, durationSeconds);
  if (!pickedId || claimed) return claimed;
  return (await endExpiryThenLease(tx, pickedId, workerId, durationSeconds)) ?? claimNextInTransaction(tx, workerId, parentId, durationSeconds);
}

/**
 * Named claim: wait for the row (no SKIP), re-check readiness under the lock, lease it. Null
 * when recording the item's expired lease sent it to a person (rule 11 (repeated expiry goes to
 * a person)): that is committed, and `claim` refuses afterwards.
 */
export async function claimNamedItem(tx: Tx, id: string, workerId: string, durationSeconds: number): Promise<ClaimResult | null> {
  await refuseDrainedWorker(tx, workerId);
  const stage = await lockNamedItemStage(tx, id);
  if (stage === null) throw notFound("work item", id);
  if (stage !== "ready") {
    throw new WorkGraphError("NOT_CLAIMABLE", `work item ${id} is not ready: it is ${stage}`, { stage, workItemId: id });
  }
  return endExpiryThenLease(tx, id, workerId, durationSeconds);
}

export async function claim(db: Db, caller: Caller, workerId: string, input: ClaimInput): Promise<ClaimResult | null> {
  const claimed = await timeClaim(async () => {
    // The common claim — the next item, no idempotency key — as one autocommit statement: one
    // round trip on every agent's hot path. Only an expired lease to end first takes the transaction.
    if (input.workItemId === undefined && input.idempotencyKey === undefined) {
      const { pickedId, claimed } = await retryingConflicts(() => leaseNextClaimable(db, workerId, input.parentId, input.durationSeconds));
      if (!pickedId || claimed) return claimed;
    }
    return inTransaction(db, (tx) =>
      idempotent(tx, idempotencyScope(caller, workerId), input.idempotencyKey, "leases.claim", input, () =>
        input.workItemId !== undefined
          ? claimNamedItem(tx, input.workItemId, workerId, input.durationSeconds)
          : claimNextInTransaction(tx, workerId, input.parentId, input.durationSeconds),
        (result) => result !== null,
      ),
    );
  });
  if (claimed) announceLocally(db, ["lease.claimed"]);
  if (!claimed && input.workItemId !== undefined) {
    throw new WorkGraphError("NOT_CLAIMABLE", `work item ${input.workItemId} is not ready: its leases kept expiring, so it waits for a person`, {
      stage: "needs_attention",
      workItemId: input.workItemId,
    });
  }
  return claimed;
}

