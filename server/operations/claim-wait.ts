import type { Db } from "../db";
import { isTerminalStage } from "../domain/contract";
import type { Caller } from "../domain/types";
import { WorkGraphError } from "../errors";
import { wakeups } from "../realtime/wakeups";
import { claim, type ClaimInput, type ClaimResult } from "./claim";

/** A named item in a terminal stage will never become claimable: no point waiting for it. */
function mayBecomeClaimable(error: unknown): boolean {
  return error instanceof WorkGraphError && error.reason === "NOT_CLAIMABLE" && !isTerminalStage(String(error.detail?.stage));
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
  const named = input.workItemId;
  const group = named !== undefined ? `item:${named}` : input.parentId !== undefined ? `parent:${input.parentId}` : "next";
  const attempt = async () => {
    try {
      return await claim(db, caller, workerId, input);
    } catch (error) {
      if (named !== undefined && mayBecomeClaimable(error)) return null;
      throw error;
    }
  };
  const result = await wakeups(db).claimWhenReady(group, waitSeconds * 1000, attempt, signal);
  if (result === null && named !== undefined && !signal?.aborted) return claim(db, caller, workerId, input);
  return result;
}
