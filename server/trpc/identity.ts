import type { Caller } from "../domain/types";
import { WorkGraphError } from "../errors";

/**
 * The worker a claim is made for: an agent token's own worker id; an admin must name one.
 * An agent naming another worker is refused.
 */
export function claimingWorker(caller: Caller, requested: string | undefined): string {
  if (caller.role === "agent") {
    if (requested !== undefined && requested !== caller.workerId) {
      throw new WorkGraphError("FORBIDDEN", `this token acts for worker ${caller.workerId}, not ${requested}`);
    }
    return caller.workerId!;
  }
  if (requested === undefined) throw new WorkGraphError("VALIDATION", "an admin acting for a worker must pass workerId");
  return requested;
}

/** For lease-bound calls an agent may not name another worker either; the lease decides the rest. */
export function assertActsForSelf(caller: Caller, requested: string | undefined): void {
  if (caller.role === "agent" && requested !== undefined && requested !== caller.workerId) {
    throw new WorkGraphError("FORBIDDEN", `this token acts for worker ${caller.workerId}, not ${requested}`);
  }
}
