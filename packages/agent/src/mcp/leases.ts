import type { Lease, WorkGraphClient } from "../sdk/client";
import { toWorkGraphError, WorkGraphError } from "../sdk/errors";

interface Held {
  lease: Lease;
  durationSeconds: number;
  /** performance.now() by which the lease has surely expired unless a renewal succeeded. */
  deadline: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Set once the lease is gone for this session: every later write on the item is refused locally. */
  lost: WorkGraphError | null;
}

/** Seconds a lease is shortened to when the session ends, so its item is back in the queue almost at once. */
export const HAND_BACK_SECONDS = 1;

const fencedLocally = (lease: Lease, kind: string, message: string) =>
  new WorkGraphError("LEASE_NOT_CURRENT", message, {
    code: "CONFLICT",
    detail: { kind, leaseId: lease.id, epoch: lease.epoch, workItemId: lease.workItemId, local: true },
  });

/**
 * The leases one MCP session obtained. Only these are ever written with (never a lease another
 * session or process holds, even for the same worker); each is renewed in the background at
 * about a third of its duration until it ends, is lost, or the session hands it back.
 */
export class SessionLeases {
  private readonly held = new Map<string, Held>();
  /** Set when the session ends: a lease obtained after that (a claim racing the end) is handed back at once. */
  private closing = false;

  constructor(private readonly client: WorkGraphClient) {}

  /** Starts owning `lease` (just obtained by a claim, a decomposition or a re-claim after an answer). */
  hold(lease: Lease, durationSeconds: number, grantedAt = performance.now()) {
    if (this.closing) {
      void this.client.leases.renew.mutate({ leaseId: lease.id, epoch: lease.epoch, durationSeconds: HAND_BACK_SECONDS }).catch(() => {});
      return;
    }
    this.stopRenewing(lease.workItemId);
    const entry: Held = { lease, durationSeconds, deadline: grantedAt + durationSeconds * 1000, timer: undefined, lost: null };
    this.held.set(lease.workItemId, entry);
    this.scheduleRenewal(entry, (durationSeconds * 1000) / 3);
  }

  /** The session's live lease on the item; LEASE_NOT_CURRENT when it holds none or lost it. */
  current(workItemId: string): Lease {
    const entry = this.held.get(workItemId);
    if (!entry) {
      throw new WorkGraphError("LEASE_NOT_CURRENT", `this session holds no lease on ${workItemId}`, {
        code: "CONFLICT",
        detail: { kind: "unknown", workItemId, local: true },
      });
    }
    if (entry.lost) throw entry.lost;
    return entry.lease;
  }

  /** "held", "lost" or "none": what `show` tells the agent. */
  status(workItemId: string): { state: "held" | "lost" | "none"; lease: Lease | null } {
    const entry = this.held.get(workItemId);
    if (!entry) return { state: "none", lease: null };
    return { state: entry.lost ? "lost" : "held", lease: entry.lease };
  }

  /**
   * Runs one write with the session's lease on the item. A LEASE_NOT_CURRENT answer marks the
   * lease lost (no later call sends it again); `endsLease` says whether a success ended it.
   */
  async write<T>(workItemId: string, call: (lease: Lease) => Promise<T>, endsLease: (result: T) => boolean): Promise<T> {
    const lease = this.current(workItemId);
    try {
      const result = await call(lease);
      if (endsLease(result)) this.forget(workItemId);
      return result;
    } catch (thrown) {
      const error = toWorkGraphError(thrown);
      if (error.fenced) this.markLost(workItemId, error);
      throw error;
    }
  }

  forget(workItemId: string) {
    this.stopRenewing(workItemId);
    this.held.delete(workItemId);
  }

  /** Live leases this session holds. */
  live(): Lease[] {
    return [...this.held.values()].filter((entry) => !entry.lost).map((entry) => entry.lease);
  }

  /** Session end: stop renewing and shorten every live lease to expire within seconds. */
  async handBackAll(): Promise<void> {
    this.closing = true;
    const leases = this.live();
    for (const lease of leases) this.stopRenewing(lease.workItemId);
    await Promise.allSettled(leases.map((lease) =>
      this.client.leases.renew.mutate({ leaseId: lease.id, epoch: lease.epoch, durationSeconds: HAND_BACK_SECONDS })));
    this.held.clear();
  }

  private markLost(workItemId: string, error: WorkGraphError) {
    const entry = this.held.get(workItemId);
    if (!entry || entry.lost) return;
    this.stopRenewing(workItemId);
    entry.lost = error;
  }

  private stopRenewing(workItemId: string) {
    const entry = this.held.get(workItemId);
    if (entry) clearTimeout(entry.timer);
  }

  private scheduleRenewal(entry: Held, delayMs: number) {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => void this.renew(entry), delayMs);
  }

  private async renew(entry: Held) {
    if (entry.lost || this.held.get(entry.lease.workItemId) !== entry) return;
    const sentAt = performance.now();
    try {
      const lease = await this.client.leases.renew.mutate({ leaseId: entry.lease.id, epoch: entry.lease.epoch, durationSeconds: entry.durationSeconds });
      if (entry.lost || this.held.get(lease.workItemId) !== entry) return;
      entry.lease = lease;
      entry.deadline = sentAt + entry.durationSeconds * 1000;
      this.scheduleRenewal(entry, (entry.durationSeconds * 1000) / 3);
    } catch (thrown) {
      const error = toWorkGraphError(thrown);
      if (entry.lost || this.held.get(entry.lease.workItemId) !== entry) return;
      if (!error.retryable) {
        this.markLost(entry.lease.workItemId, error);
      } else if (performance.now() >= entry.deadline) {
        this.markLost(entry.lease.workItemId, fencedLocally(entry.lease, "expired", "the lease could not be renewed before it expired"));
      } else {
        // No answer from the server: try again soon, well before the lease runs out.
        this.scheduleRenewal(entry, Math.min(1000, (entry.durationSeconds * 1000) / 9));
      }
    }
  }
}
