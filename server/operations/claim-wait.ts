import type { Db } from "../db";
import { isTerminalStage } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { WorkGraphError } from "../errors";
import { wakeups } from "../realtime/wakeups";
import { claim, claimRouting, type ClaimInput, type ClaimResult } from "./claim";

/**
 * A named item in a terminal stage will never become claimable, nor will one whose `requires`
 * the claim lacks: no point waiting for those. A full key (rule 14) frees up.
 */
function mayBecomeClaimable(error: unknown): boolean {
  if (!(error instanceof WorkGraphError)) return false;
  if (error.reason === "LIMIT_REACHED") return true;
  return error.reason === "NOT_CLAIMABLE" && !isTerminalStage(String(error.detail?.stage)) && error.detail?.missing === undefined;
}

/**
 * `leases.claim` with `waitSeconds` (API.md "Waiting instead of polling"): claims now, or
 * waits without holding a connection until something becomes claimable for this caller
 * (server/realtime/wakeups.ts) and claims it then, or returns null when the time is up.
 * A named claim waits for that item to become ready; when the time is up it answers like an
 * immediate claim would then (NOT_CLAIMABLE with the current stage, or the lease).
 */
export async function claimWaiting(
  db: Db,
  caller: Caller,
  workerId: string,
  input: ClaimInput,
  waitSeconds: number,
  signal?: AbortSignal,
): Promise<ClaimResult | null> {
  if (waitSeconds <= 0) return claim(db, caller, workerId, input);
  const routing = await claimRouting(db, caller, workerId, input);
  const named = input.workItemId;
  // Next claims with different routings (rules 12, 13) cannot stand for each other.
  const routed = JSON.stringify(routing);
  const group = named !== undefined ? `item:${named}` : input.parentId !== undefined ? `parent:${input.parentId}:${routed}` : `next:${routed}`;
  const attempt = async () => {
    try {
      return await claim(db, caller, workerId, input, routing);
    } catch (error) {
      if (named !== undefined && mayBecomeClaimable(error)) return null;
      throw error;
    }
  };
  const result = await wakeups(db).claimWhenReady(group, waitSeconds * 1000, attempt, signal, routing);
  if (result === null && named !== undefined && !signal?.aborted) return claim(db, caller, workerId, input, routing);
  return result;
}
