import { continuitySeconds, maxConsecutiveExpiries } from "../config";
import type { Db } from "../db";
import { autocommit, inTransaction, type Tx } from "../database/transaction";
import { workerDrained } from "../domain/draining";
import { idempotencyScope } from "../domain/idempotency";
import type { AttentionRequest, Lease, WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toAttentionRequest, toLease, toWorkItem } from "../domain/views";
import { notFound, WorkGraphError } from "../errors";
import { countClaim, timeClaim } from "../metrics";
import { agentCapabilities, missingCapabilities, type Routing } from "../domain/routing";
import {
  claimNext, leaseLockedItem, lockKeyAndCountLiveLeases, lockNamedItemState, markClaimProbe, rollBackClaimProbe, workerCapabilities, type ClaimRow,
} from "../sql/claims";
import { idempotent } from "./idempotent";
import { endExpiredLeases } from "../sql/leases";
import { sendRepeatedExpiriesToPerson } from "../sql/repeated-expiry";
import { refuseDrainedWorker } from "../sql/workers";
import { selectWorkItem } from "../sql/work-items";
import { cancelWhereLeaseEnded } from "./lease-end-cancellation";

export interface ClaimInput {
  workItemId?: string;
  parentId?: string;
  durationSeconds: number;
  idempotencyKey?: string;
  /** Rule 12: take only items of this project (within the caller's scope). */
  projectId?: string;
  /** Rule 13: the claim's capabilities; absent: the token's (see claimCapabilities). */
  capabilities?: string[];
}

/** A named claim made by the server for a lease holder (decompose's claimChildId): no project or capability filter. */
const UNROUTED: Routing = { projects: [], capabilities: null };

/** Next-claim probes of one claim that may find a limited key full before it gives up (each passes over one more key). */
const MAX_FULL_KEY_PROBES = 20;

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
 * (repeated expiry goes to a person)) or cancelled it (its cancellation was asked for meanwhile:
 * server/operations/lease-end-cancellation.ts).
 */
async function endExpiryThenLease(tx: Tx, itemId: string, workerId: string, durationSeconds: number): Promise<ClaimResult | null> {
  const expired = (await endExpiredLeases(tx, [itemId])).map((lease) => lease.workItemId);
  if ((await cancelWhereLeaseEnded(tx, expired)).length > 0) return null;
  if ((await sendRepeatedExpiriesToPerson(tx, expired, maxConsecutiveExpiries())).length > 0) return null;
  return countClaim(tx, toClaimResult(await leaseLockedItem(tx, itemId, workerId, durationSeconds)));
}

/**
 * Rule 13: the capabilities a claim routes by. An agent's must be a subset of its token's
 * (default: the token's); an admin acting for a worker may pass any (default: the union over
 * that worker's unrevoked agent tokens).
 */
async function claimCapabilities(db: Db, caller: Caller, workerId: string, requested: string[] | undefined): Promise<string[]> {
  return agentCapabilities(caller, requested) ?? (await workerCapabilities(db, workerId));
}

/**
 * Next claim as one statement (server/sql/claims.ts claimNext). `pickedId` without `claimed`:
 * the item found still carries an expired, unended lease, or its key has a limit; either must
 * be finished in a transaction.
 */
async function leaseNextClaimable(
  db: Db | Tx, workerId: string, parentId: string | undefined, durationSeconds: number, routing: Routing, passOverKeys: string[] = [],
): Promise<{ pickedId: string | null; limitedKey: string | null; claimed: ClaimResult | null }> {
  const row = await claimNext(db, workerId, parentId, durationSeconds, routing, passOverKeys, continuitySeconds());
  if (row.drained) throw workerDrained(workerId, row.drained);
  return { pickedId: row.pickedId, limitedKey: row.limitedKey, claimed: row.lease ? countClaim(db, toClaimResult(row as ClaimRow)) : null };
}

/**
 * Next claim in a transaction (an idempotency key, an expired lease to end first, or a limited
 * key). Each probe picks and locks an item (SKIP LOCKED) after a savepoint; an item with a
 * limited key is leased only when the key has room (rule 14, server/domain/routing.ts), else
 * the probe rolls back to the savepoint — releasing the item and the key row, so this
 * transaction never holds a key row while it locks another item — and the next probe passes
 * over that key. An item sent to a person on the way is no longer claimable, so the next probe
 * skips it — unless this probe holds a key's lock, which a probe that goes on must never do:
 * then the claim ends with nothing (rare: the commit of the help request wakes waiting claims).
 */
async function claimNextInTransaction(
  tx: Tx, workerId: string, parentId: string | undefined, durationSeconds: number, routing: Routing,
): Promise<ClaimResult | null> {
  const passOverKeys: string[] = [];
  for (let probe = 0; probe < MAX_FULL_KEY_PROBES; probe++) {
    await markClaimProbe(tx);
    const { pickedId, limitedKey, claimed } = await leaseNextClaimable(tx, workerId, parentId, durationSeconds, routing, passOverKeys);
    if (!pickedId || claimed) return claimed;
    if (limitedKey !== null) {
      const room = await lockKeyAndCountLiveLeases(tx, limitedKey);
      if (room && room.liveLeases >= room.maxLeases) {
        await rollBackClaimProbe(tx);
        passOverKeys.push(limitedKey);
        continue;
      }
    }
    const leased = await endExpiryThenLease(tx, pickedId, workerId, durationSeconds);
    if (leased || limitedKey !== null) return leased;
  }
  return null;
}

/** Rule 14 for a named claim whose item (locked) has concurrency key `key`: LIMIT_REACHED when the key is full. */
async function refuseFullKey(tx: Tx, id: string, key: string | null): Promise<void> {
  const room = key === null ? null : await lockKeyAndCountLiveLeases(tx, key);
  if (room && room.liveLeases >= room.maxLeases) {
    throw new WorkGraphError("LIMIT_REACHED", `work item ${id} has concurrency key ${room.key}, which is at its limit of ${room.maxLeases} live leases`, {
      key: room.key,
      maxLeases: room.maxLeases,
      liveLeases: room.liveLeases,
      workItemId: id,
    });
  }
}

/**
 * Named claim: wait for the row (no SKIP), re-check readiness, capabilities and the key's limit
 * under the lock, lease it. Null when recording the item's expired lease sent it to a person
 * (rule 11 (repeated expiry goes to a person)): that is committed, and `claim` refuses afterwards.
 */
export async function claimNamedItem(
  tx: Tx, id: string, workerId: string, durationSeconds: number, routing: Routing = UNROUTED,
): Promise<ClaimResult | null> {
  await refuseDrainedWorker(tx, workerId);
  const state = await lockNamedItemState(tx, id, routing);
  if (state === null) throw notFound("work item", id);
  if (state.stage === "scheduled") {
    const notBefore = state.notBefore!.toISOString();
    throw new WorkGraphError("NOT_CLAIMABLE", `work item ${id} is not ready: it is scheduled for ${notBefore}`, {
      stage: "scheduled",
      notBefore,
      workItemId: id,
    });
  }
  if (state.stage !== "ready") {
    throw new WorkGraphError("NOT_CLAIMABLE", `work item ${id} is not ready: it is ${state.stage}`, { stage: state.stage, workItemId: id });
  }
  const missing = missingCapabilities(state.requires, routing.capabilities);
  if (missing.length > 0) {
    throw new WorkGraphError("NOT_CLAIMABLE", `work item ${id} requires capabilities this claim lacks: ${missing.join(", ")}`, {
      stage: "ready",
      missing,
      workItemId: id,
    });
  }
  await refuseFullKey(tx, id, state.concurrencyKey);
  return endExpiryThenLease(tx, id, workerId, durationSeconds);
}

/** The routing of `caller`'s claim for `workerId` (rules 12 and 13). */
export async function claimRouting(db: Db, caller: Caller, workerId: string, input: Pick<ClaimInput, "projectId" | "capabilities">): Promise<Routing> {
  return { projects: caller.projects, projectId: input.projectId, capabilities: await claimCapabilities(db, caller, workerId, input.capabilities) };
}

// A claim's commit is quiet when it leased an item (server/database/transaction.ts QuietCommit).
const leasedNext = (next: { claimed: ClaimResult | null }) => next.claimed !== null;
const leased = (result: ClaimResult | null) => result !== null;

/** `routing`: claimRouting's answer when the caller has it already (a waiting claim resolves it once). */
export async function claim(db: Db, caller: Caller, workerId: string, input: ClaimInput, resolved?: Routing): Promise<ClaimResult | null> {
  const routing = resolved ?? (await claimRouting(db, caller, workerId, input));
  const claimed = await timeClaim(db, async () => {
    // The common claim — the next item, no idempotency key — as one autocommit statement: one
    // round trip on every agent's hot path. Only an expired lease to end first or an item with
    // a limited key (rule 14) takes the transaction.
    if (input.workItemId === undefined && input.idempotencyKey === undefined) {
      const { pickedId, claimed } = await autocommit(
        db, () => leaseNextClaimable(db, workerId, input.parentId, input.durationSeconds, routing), leasedNext,
      );
      if (!pickedId || claimed) return claimed;
    }
    return inTransaction(db, (tx) =>
      idempotent(tx, idempotencyScope(caller, workerId), input.idempotencyKey, "leases.claim", input, () =>
        input.workItemId !== undefined
          ? claimNamedItem(tx, input.workItemId, workerId, input.durationSeconds, routing)
          : claimNextInTransaction(tx, workerId, input.parentId, input.durationSeconds, routing),
        (result) => result !== null,
      ),
      leased,
    );
  });
  if (!claimed && input.workItemId !== undefined) {
    // Ending its expired lease sent the item to a person (rule 11) or cancelled it (its cancellation was asked for meanwhile).
    const stage = (await inTransaction(db, (tx) => selectWorkItem(tx, input.workItemId!)))?.stage ?? "needs_attention";
    const why = stage === "cancelled" ? "its cancellation was asked for while it was leased, so it was cancelled when that lease expired" : "its leases kept expiring, so it waits for a person";
    throw new WorkGraphError("NOT_CLAIMABLE", `work item ${input.workItemId} is not ready: ${why}`, { stage, workItemId: input.workItemId });
  }
  return claimed;
}
