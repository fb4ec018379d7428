/**
 * Holding leases, for every agent front end: runWorker holds one `HeldLease` at a time, the MCP
 * server and the CLI keep `SessionLeases` (the MCP server in memory, renewed in the background;
 * the CLI, one process per command, in its state file). Here and only here a lease is renewed,
 * handed back, marked lost when the server fences it, and refused locally (LEASE_NOT_CURRENT
 * with `detail.local: true`) when this session did not obtain it or lost it: fencing (ADR 002)
 * holds on the client too, a lease is never written with after it is gone.
 */
import type { Lease } from "@work-graph/contract";
import type { FinishResult, HandBackInput, WorkGraphClient } from "./client";
import { toWorkGraphError, WorkGraphError, type LeaseNotCurrentKind } from "./errors";
import { NO_RETRY, REPLAY, retryUnanswered, type RetryPolicy } from "./retry";

/**
 * A server without `leases.handBack` (before API v3): the lease is shortened to expire in this
 * many seconds instead, so the item is back in the queue almost at once (but it ends `expired`,
 * which counts toward rule 11).
 */
export const HAND_BACK_SECONDS = 1;

/** What the server answers when it has no such procedure (tRPC's own message). */
const isUnknownProcedure = (error: WorkGraphError) => error.reason === "NOT_FOUND" && /^No procedure found on path/.test(error.message);

type LeaseEnd = "release" | "cancel" | "handBack";
type LeaseEndInput<K extends LeaseEnd> = K extends "release" ? { evidence: string; links?: string[] } : K extends "cancel" ? { reason: string } : HandBackInput;
const OUTCOME_OF: Record<LeaseEnd, NonNullable<Lease["outcome"]>> = { release: "released", cancel: "cancelled", handBack: "returned" };

/**
 * Ends a lease with release, cancel or hand-back. None of them has an idempotency key: when a
 * retry after a lost answer is refused as `ended`, the lease is read back; if it ended the way we
 * asked, the first attempt landed. A hand-back to a server that does not know `leases.handBack`
 * falls back to shortening the lease (HAND_BACK_SECONDS).
 */
async function endLease<K extends LeaseEnd>(client: WorkGraphClient, ref: LeaseRef, kind: K, input: LeaseEndInput<K>, retry: RetryPolicy): Promise<FinishResult> {
  let retried = false;
  const send = (): Promise<FinishResult> => {
    switch (kind) {
      case "release":
        return client.leases.release.mutate({ ...ref, ...(input as LeaseEndInput<"release">) });
      case "cancel":
        return client.leases.cancel.mutate({ ...ref, ...(input as LeaseEndInput<"cancel">) });
      default:
        return client.leases.handBack.mutate({ ...ref, ...(input as HandBackInput) });
    }
  };
  try {
    return await retryUnanswered(send, retry, () => { retried = true; });
  } catch (thrown) {
    const error = toWorkGraphError(thrown);
    if (kind === "handBack" && isUnknownProcedure(error)) {
      const lease = await retryUnanswered(() => client.leases.renew.mutate({ ...ref, durationSeconds: HAND_BACK_SECONDS }), retry);
      return { lease, workItem: await client.workItems.get.query({ id: lease.workItemId }) };
    }
    if (retried && error.leaseKind === "ended") {
      const lease = await client.leases.get.query({ leaseId: ref.leaseId });
      if (lease.outcome === OUTCOME_OF[kind]) return { lease, workItem: await client.workItems.get.query({ id: lease.workItemId }) };
    }
    throw error;
  }
}

/** The local LEASE_NOT_CURRENT: nothing was sent, the lease is not (or no longer) this session's to write with. */
export function leaseNotCurrent(
  kind: LeaseNotCurrentKind,
  message: string,
  lease: { workItemId: string; leaseId?: string; epoch?: number },
): WorkGraphError {
  return new WorkGraphError("LEASE_NOT_CURRENT", message, { code: "CONFLICT", detail: { kind, ...lease, local: true } });
}

const now = () => performance.now();

/** Lease length as the server set it (no local clock involved). */
const secondsOf = (lease: Lease) => (Date.parse(lease.expiresAt) - Date.parse(lease.renewedAt ?? lease.acquiredAt)) / 1000;

export type HeldLeaseState = "live" | "ending" | "ended" | "lost";

export interface HeldLeaseOptions {
  /** Lease length asked for on every renewal. */
  durationSeconds: number;
  /** performance.now() when the request that obtained the lease was first sent: it cannot expire earlier than this + the duration. */
  grantedAt: number;
  /** Renewal period (default a third of the duration). */
  renewIntervalMs?: number;
  /** Retries of a write that got no answer (default none: the caller retries what it may replay). */
  retry?: RetryPolicy;
  onRenewed?: (lease: Lease) => void;
  onRenewFailed?: (error: WorkGraphError) => void;
  /** The lease is gone (fenced, or not renewed in time): nothing more is written with it. */
  onLost?: (error: WorkGraphError) => void;
}

export interface WriteOptions<T> {
  /** Whether a successful result ends the lease (renewals stop first, and resume if the write is refused for another reason). */
  ends?: (result: T) => boolean;
  /** The session's last write (its result, a hand-back): allowed while renewals are stopped for it. */
  final?: boolean;
  /** false: this write is not retried even under a retry policy (it retries itself). */
  retry?: boolean;
}

/**
 * One lease this session obtained: renewed in the background at a third of its duration, a local
 * expiry watchdog (armed from when the lease was requested, so it can only fire early), and the
 * single gate every write with the lease goes through. Once lost or ended, the gate refuses locally.
 */
export class HeldLease {
  state: HeldLeaseState = "live";
  lease: Lease;
  private readonly renewIntervalMs: number;
  private readonly retry: RetryPolicy;
  private renewTimer: ReturnType<typeof setTimeout> | undefined;
  private watchdog: ReturnType<typeof setTimeout> | undefined;
  private renewing: Promise<void> | null = null;
  private deadline: number;

  constructor(
    private readonly client: WorkGraphClient,
    lease: Lease,
    private readonly options: HeldLeaseOptions,
  ) {
    this.lease = lease;
    this.deadline = options.grantedAt + options.durationSeconds * 1000;
    this.renewIntervalMs = options.renewIntervalMs ?? Math.max(100, (options.durationSeconds * 1000) / 3);
    this.retry = options.retry ?? NO_RETRY;
  }

  /** Starts the background renewals and the expiry watchdog. */
  start(): this {
    this.armWatchdog();
    this.scheduleRenewal(this.renewIntervalMs);
    return this;
  }

  private armWatchdog() {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      if (this.state !== "live" && this.state !== "ending") return;
      this.lose(leaseNotCurrent("expired", `lease ${this.lease.id} (epoch ${this.lease.epoch}) could not be renewed before it expired`, this.ref()));
    }, Math.max(0, this.deadline - now()));
  }

  private scheduleRenewal(delayMs: number) {
    clearTimeout(this.renewTimer);
    if (this.state !== "live") return;
    this.renewTimer = setTimeout(() => {
      this.renewing = this.renewInBackground().finally(() => {
        this.renewing = null;
      });
    }, delayMs);
  }

  private async sendRenewal(): Promise<Lease> {
    const sentAt = now();
    const lease = await this.client.leases.renew.mutate({ leaseId: this.lease.id, epoch: this.lease.epoch, durationSeconds: this.options.durationSeconds });
    if (this.state === "live" || this.state === "ending") {
      this.lease = lease;
      this.deadline = sentAt + this.options.durationSeconds * 1000;
      this.armWatchdog();
    }
    return lease;
  }

  private async renewInBackground(): Promise<void> {
    if (this.state !== "live") return;
    try {
      const lease = await this.sendRenewal();
      if (this.state !== "live" && this.state !== "ending") return;
      this.options.onRenewed?.(lease);
      this.scheduleRenewal(this.renewIntervalMs);
    } catch (thrown) {
      const error = toWorkGraphError(thrown);
      if (this.state !== "live") return;
      if (!error.retryable) {
        // Fenced, or a refusal that means we may not write any more (revoked token…): the lease is gone for us.
        this.lose(error);
        return;
      }
      this.options.onRenewFailed?.(error);
      // No answer: try again soon, well before the lease runs out (the watchdog gives up at its expiry).
      this.scheduleRenewal(Math.max(100, Math.min(1000, this.renewIntervalMs / 3)));
    }
  }

  private stopTimers() {
    clearTimeout(this.renewTimer);
    clearTimeout(this.watchdog);
  }

  /** Fenced: never write with this lease again. */
  private lose(error: WorkGraphError) {
    if (this.state === "lost" || this.state === "ended") return;
    this.state = "lost";
    this.stopTimers();
    this.options.onLost?.(error);
  }

  /** The lease ended (or the session let go of it): no more renewals, no more writes. */
  end() {
    if (this.state === "lost") return;
    this.state = "ended";
    this.stopTimers();
  }

  /** Stop renewing and wait for a renewal in flight (so it cannot race the final write). */
  async quiesce(): Promise<void> {
    clearTimeout(this.renewTimer);
    if (this.state === "live") this.state = "ending";
    await this.renewing;
  }

  private resume() {
    if (this.state === "ending") {
      this.state = "live";
      this.scheduleRenewal(0);
    }
  }

  /** A method, not a field test: the state changes across an await. */
  private isLost() {
    return this.state === "lost";
  }

  private ref() {
    return { workItemId: this.lease.workItemId, leaseId: this.lease.id, epoch: this.lease.epoch };
  }

  private refusal(): WorkGraphError {
    return leaseNotCurrent(this.state === "lost" ? "expired" : "ended",
      `not sent: lease ${this.lease.id} (epoch ${this.lease.epoch}) is no longer live for this worker (${this.state})`, this.ref());
  }

  /** The gate for every write with this lease. */
  async write<T>(call: () => Promise<T>, options: WriteOptions<T> = {}): Promise<T> {
    if (this.state !== "live" && !(options.final && this.state === "ending")) throw this.refusal();
    if (options.ends) await this.quiesce();
    if (this.isLost()) throw this.refusal(); // lost while a renewal was in flight
    try {
      const result = options.retry === false ? await call() : await retryUnanswered(() => call(), this.retry);
      if (options.ends) {
        if (options.ends(result)) this.end();
        else this.resume();
      }
      return result;
    } catch (thrown) {
      const error = toWorkGraphError(thrown);
      if (error.fenced) this.lose(error);
      else if (options.ends && !options.final) this.resume();
      throw error;
    }
  }

  /** Renews right now (besides the background renewals). */
  renewNow(): Promise<Lease> {
    return this.write(() => this.sendRenewal());
  }

  /** Ends the lease: release, cancel, or hand the item back unfinished (`leases.handBack`, outcome `returned`). */
  finish<K extends LeaseEnd>(kind: K, input: LeaseEndInput<K>): Promise<FinishResult> {
    return this.write(() => endLease(this.client, { leaseId: this.lease.id, epoch: this.lease.epoch }, kind, input, this.retry),
      { ends: () => true, final: true, retry: false });
  }

  /** Hands the item back unfinished (rule 16): it is ready again at once, or after `retryAfterSeconds`. */
  handBack(input: HandBackInput): Promise<FinishResult> {
    return this.finish("handBack", input);
  }
}

/** What a session remembers of a lease it obtained. */
export interface RememberedLease {
  leaseId: string;
  epoch: number;
  /** Set once the server fenced it: the session never writes with it again. */
  fenced?: { kind: string };
}

/** Where a session keeps its leases: in memory (the MCP server), or a state file (the CLI, cli/state.ts). */
export interface LeaseMemory {
  get(workItemId: string): RememberedLease | null;
  remember(lease: Lease): void;
  fence(workItemId: string, leaseId: string, kind: string): void;
  forget(workItemId: string): void;
}

class LeasesInMemory implements LeaseMemory {
  private readonly leases = new Map<string, RememberedLease>();

  get(workItemId: string) {
    return this.leases.get(workItemId) ?? null;
  }

  remember(lease: Lease) {
    this.leases.set(lease.workItemId, { leaseId: lease.id, epoch: lease.epoch });
  }

  fence(workItemId: string, leaseId: string, kind: string) {
    const entry = this.leases.get(workItemId);
    if (entry?.leaseId === leaseId) entry.fenced = { kind };
  }

  forget(workItemId: string) {
    this.leases.delete(workItemId);
  }
}

/** A lease named on a write: `leaseId` + `epoch`, as every lease-bound procedure takes them. */
export interface LeaseRef {
  leaseId: string;
  epoch: number;
}

/** The reason a session's leases are handed back with when it ends. */
const SESSION_ENDED = "the agent's session ended before the item was finished";

export interface SessionLeasesOptions {
  /** Default: in memory, for the life of the process. */
  memory?: LeaseMemory;
  /** Renew every held lease in the background until it ends (a long-lived session); the CLI renews by command. */
  renewInBackground: boolean;
  /** What this front end tells the agent to do, added to a refusal: when the session holds no lease on the item, and when it lost it. */
  advice?: { notHeld: (workItemId: string) => string; fenced: (workItemId: string) => string };
}

/**
 * The leases one session obtained, by work item. Writes use only these: never a lease another
 * session or process holds, even for the same worker (its current lease may be someone else's
 * after a takeover). A fenced lease stays refused until the session obtains the item again;
 * an ended one is forgotten.
 */
export class SessionLeases {
  private readonly memory: LeaseMemory;
  private readonly renewers = new Map<string, HeldLease>();
  /** Set when the session ends: a lease obtained after that (a claim racing the end) is handed back at once. */
  private closing = false;

  constructor(
    private readonly client: WorkGraphClient,
    private readonly options: SessionLeasesOptions,
  ) {
    this.memory = options.memory ?? new LeasesInMemory();
  }

  /** Starts owning `lease` (just obtained by a claim, a decomposition or a re-claim after an answer). */
  hold(lease: Lease, durationSeconds = secondsOf(lease), grantedAt = now()) {
    const holder = new HeldLease(this.client, lease, {
      durationSeconds,
      grantedAt,
      onRenewed: (renewed) => this.memory.remember(renewed),
      onLost: (error) => this.memory.fence(lease.workItemId, lease.id, error.leaseKind ?? "expired"),
    });
    if (this.closing) {
      void holder.handBack({ reason: SESSION_ENDED }).catch(() => {});
      return;
    }
    this.renewers.get(lease.workItemId)?.end();
    this.renewers.delete(lease.workItemId);
    this.memory.remember(lease);
    if (this.options.renewInBackground) this.renewers.set(lease.workItemId, holder.start());
  }

  /** The session's live lease on the item; LEASE_NOT_CURRENT when it holds none or lost it. */
  current(workItemId: string): LeaseRef {
    const entry = this.memory.get(workItemId);
    const { advice } = this.options;
    if (!entry) {
      throw leaseNotCurrent("unknown", `this session holds no lease on ${workItemId}${advice ? `: ${advice.notHeld(workItemId)}` : ""}`, { workItemId });
    }
    if (entry.fenced) {
      throw leaseNotCurrent(entry.fenced.kind as LeaseNotCurrentKind,
        `your lease on ${workItemId} (epoch ${entry.epoch}) was fenced (${entry.fenced.kind}): stop working on it.${advice ? ` ${advice.fenced(workItemId)}` : ""}`,
        { workItemId, leaseId: entry.leaseId, epoch: entry.epoch });
    }
    return { leaseId: entry.leaseId, epoch: entry.epoch };
  }

  /** "held", "lost" or "none", with the epoch: what `show` tells the agent. */
  status(workItemId: string): { state: "held" | "lost" | "none"; epoch: number | null } {
    const entry = this.memory.get(workItemId);
    if (!entry) return { state: "none", epoch: null };
    return { state: entry.fenced ? "lost" : "held", epoch: entry.epoch };
  }

  /**
   * Runs one write with the session's lease on the item (or `explicit`, a lease named by the
   * caller, used as given). A LEASE_NOT_CURRENT answer fences the session's lease (no later
   * call sends it again); `endsLease` says whether a success ended it (then it is forgotten).
   */
  async write<T>(workItemId: string, call: (lease: LeaseRef) => Promise<T>, endsLease: (result: T) => boolean, explicit?: LeaseRef): Promise<T> {
    const lease = explicit ?? this.current(workItemId);
    try {
      const result = await call(lease);
      if (endsLease(result)) this.forget(workItemId);
      return result;
    } catch (thrown) {
      const error = toWorkGraphError(thrown);
      if (error.fenced && !explicit) {
        this.memory.fence(workItemId, lease.leaseId, error.leaseKind ?? "unknown");
        this.stopRenewing(workItemId);
      }
      throw error;
    }
  }

  /** Renews the session's lease on the item now (the CLI's `renew`), for `durationSeconds` (default: the server's). */
  async renew(workItemId: string, durationSeconds?: number, explicit?: LeaseRef): Promise<Lease> {
    const lease = await this.write(workItemId, (ref) => this.client.leases.renew.mutate({ ...ref, durationSeconds }), () => false, explicit);
    this.memory.remember(lease);
    return lease;
  }

  /** Hands the item back with the session's lease on it (or `explicit`): see HeldLease.handBack. */
  handBack(workItemId: string, input: HandBackInput, explicit?: LeaseRef): Promise<FinishResult> {
    return this.write(workItemId, (ref) => endLease(this.client, ref, "handBack", input, REPLAY), () => true, explicit);
  }

  /** Lets go of the item's lease without writing (it ended). */
  private forget(workItemId: string) {
    this.stopRenewing(workItemId);
    this.memory.forget(workItemId);
  }

  private stopRenewing(workItemId: string) {
    this.renewers.get(workItemId)?.end();
    this.renewers.delete(workItemId);
  }

  /** Session end: stop renewing and hand every live lease back (`leases.handBack`: the items are ready again at once). */
  async handBackAll(): Promise<void> {
    this.closing = true;
    const holders = [...this.renewers.values()];
    this.renewers.clear();
    await Promise.allSettled(holders.map(async (holder) => {
      this.memory.forget(holder.lease.workItemId);
      await holder.handBack({ reason: SESSION_ENDED });
    }));
  }
}
