import type { Db } from "../db";
import type { Routing } from "../domain/routing";
import { msUntilSoonestTimeGate } from "../sql/claims";
import { msUntilNextLeaseExpiry } from "../sql/leases";
import { timerDelay, wait, type Waiting } from "./waiting";

/** Claim attempts a dispatch round runs at once (the pool must keep room for other requests). */
const MAX_PARALLEL_CLAIMS = 8;
/** Past a lease's expiry (or a time gate) before claims are retried: the claim compares with the database clock. */
const EXPIRY_MARGIN_MS = 5;

interface ClaimWaiter {
  group: string;
  /** What the waiter's claim may take (rules 12, 13), for the time-gate timer. */
  routing: Routing | undefined;
  attempt: () => Promise<unknown>;
  waiting: Waiting<unknown>;
  busy: boolean;
  timeUp: boolean;
}

/**
 * Claim waiters (server/realtime/wakeups.ts): queued in arrival order. When a commit may have
 * made work claimable, ONE dispatcher walks the queue and lets the waiters try their claims in
 * turn (one at a time, widening while every try succeeds); a waiter whose claim finds nothing
 * stays queued, and once one claim of a kind (next claim, under one parent, one named item)
 * found nothing, the rest of that kind are not tried in that round. One item ready and 50
 * waiters: the first gets it, one more claim finds nothing, 49 keep waiting. A waiter returns
 * null only when its time is up. Expiry and time gates (rule 15) make work claimable without any
 * commit, so while claims wait the dispatcher also wakes at the earliest live lease expiry and
 * at the soonest time gate of an item one of its waiters could take (database clock): one timer
 * per instance, for its own waiters, so several instances each wake theirs.
 */
export class ClaimWaiters {
  private readonly waiters = new Set<ClaimWaiter>();
  private running = false;
  private retryPending = false;
  private rearmPending = false;
  private readiedGeneration = 0;
  private expiryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly onError: (error: unknown) => void,
  ) {}

  get size(): number {
    return this.waiters.size;
  }

  /** A commit was heard; `readied`: it may have made something claimable. */
  heard(readied: boolean) {
    if (readied) this.readiedGeneration++;
    if (this.waiters.size > 0) this.poke(readied);
  }

  /**
   * Runs `attempt` now; when it finds nothing, waits (no connection held) and lets it try
   * again each time a commit or an expiry may have made something claimable, until it
   * returns a result, throws, the time is up (null) or `signal` aborts (null). An attempt in
   * flight when the time runs out is awaited, so a lease it takes is never dropped. `group`
   * names what the attempt can find: attempts of one group that found nothing in a round
   * stand for the whole group.
   */
  async claimWhenReady<T>(
    group: string, waitMs: number, attempt: () => Promise<T | null>, signal?: AbortSignal, routing?: Routing,
  ): Promise<T | null> {
    const generation = this.readiedGeneration;
    const first = await attempt();
    if (first !== null || waitMs <= 0 || signal?.aborted || this.closed) return first;
    const waiter = { group, routing, attempt, busy: false, timeUp: false } as ClaimWaiter;
    return wait<T | null>({
      waitMs,
      signal,
      timeUpValue: null,
      // An attempt in flight decides: its lease is never dropped.
      onTimeUp: (waiting) => (waiter.busy ? (waiter.timeUp = true) : waiting.settle({ value: null })),
      enlist: (waiting) => {
        waiter.waiting = waiting;
        this.waiters.add(waiter);
        // A commit heard between the first attempt and now was missed by it: try again at once.
        this.poke(this.readiedGeneration !== generation);
        return () => this.waiters.delete(waiter);
      },
    });
  }

  private poke(retry: boolean) {
    if (retry) this.retryPending = true;
    else this.rearmPending = true;
    if (!this.running) void this.run();
  }

  private async run() {
    this.running = true;
    try {
      while (this.retryPending || this.rearmPending) {
        const retry = this.retryPending;
        this.retryPending = this.rearmPending = false;
        if (retry) await this.dispatchRound();
        await this.armExpiryTimer();
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * One pass over the queue in arrival order. Attempts run one at a time at first; while every
   * attempt of a batch claims something, the next batch is twice as wide (up to
   * MAX_PARALLEL_CLAIMS), so a burst of ready items drains quickly and a single item costs one
   * extra empty claim, not one per waiter.
   */
  private async dispatchRound() {
    const foundNothing = new Set<string>();
    const queue = [...this.waiters];
    let width = 1;
    for (let next = 0; next < queue.length; ) {
      const batch: ClaimWaiter[] = [];
      while (batch.length < width && next < queue.length) {
        const waiter = queue[next++]!;
        if (!waiter.waiting.settled && !foundNothing.has(waiter.group)) batch.push(waiter);
      }
      const claimed = await Promise.all(batch.map((waiter) => this.attemptFor(waiter)));
      claimed.forEach((found, index) => {
        if (!found) foundNothing.add(batch[index]!.group);
      });
      width = claimed.every(Boolean) ? Math.min(width * 2, MAX_PARALLEL_CLAIMS) : 1;
    }
  }

  /** One attempt for `waiter`; false when it found nothing (the waiter keeps waiting unless its time is up). */
  private async attemptFor(waiter: ClaimWaiter): Promise<boolean> {
    waiter.busy = true;
    let result: unknown;
    try {
      result = await waiter.attempt();
    } catch (error) {
      waiter.waiting.settle({ error });
      return true;
    } finally {
      waiter.busy = false;
    }
    if (result !== null) {
      waiter.waiting.settle({ value: result });
      return true;
    }
    if (waiter.timeUp) waiter.waiting.settle({ value: null });
    return false;
  }

  /** While claims wait, wake at the earliest live lease expiry or time gate (database clock). */
  private async armExpiryTimer() {
    clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    if (this.waiters.size === 0 || this.closed) return;
    let untilMs: number | null;
    try {
      const [expiry, gate] = await Promise.all([msUntilNextLeaseExpiry(this.db), msUntilSoonestTimeGate(this.db, this.waitingRoutings())]);
      untilMs = expiry === null ? gate : gate === null ? expiry : Math.min(expiry, gate);
    } catch (error) {
      // The database is unreachable: look again in a second (claims cannot succeed meanwhile anyway).
      this.onError(error);
      untilMs = 1_000;
    }
    if (untilMs === null || this.waiters.size === 0 || this.closed) return;
    this.expiryTimer = setTimeout(() => this.poke(true), timerDelay(Math.max(0, Math.ceil(untilMs)) + EXPIRY_MARGIN_MS));
  }

  /** The distinct routings of the waiting next claims. */
  private waitingRoutings(): Routing[] {
    const distinct = new Map<string, Routing>();
    for (const { routing } of this.waiters) if (routing) distinct.set(JSON.stringify(routing), routing);
    return [...distinct.values()];
  }

  /** Everything still waiting returns as if its time were up (an attempt in flight first finishes). */
  close() {
    this.closed = true;
    clearTimeout(this.expiryTimer);
    for (const waiter of [...this.waiters]) {
      if (waiter.busy) waiter.timeUp = true;
      else waiter.waiting.settle({ value: null });
    }
  }
}
