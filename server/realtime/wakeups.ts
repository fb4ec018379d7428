import { connectionStringOf, type Db } from "../db";
import { CommitListener, type Heard } from "./listener";

/**
 * Waiting instead of polling (API.md v2). One CommitListener per app instance (per Db) hears
 * every committed event, whichever instance wrote it, and fans out to in-memory waiters. A
 * waiter is a closure and a timer: it holds no database connection and no lock while it waits.
 *
 * - Claim waiters queue in arrival order. When a commit may have made work claimable, ONE
 *   dispatcher walks the queue and lets the waiters try their claims in turn (one at a time,
 *   widening while every try succeeds); a waiter whose claim finds nothing stays queued, and
 *   once one claim of a kind (next claim, under one parent, one named item) found nothing,
 *   the rest of that kind are not tried in that round. One item ready and 50 waiters: the
 *   first gets it, one more claim finds nothing, 49 keep waiting. A waiter returns null only
 *   when its time is up.
 * - Expiry makes work claimable without any commit, so while claims wait the dispatcher
 *   also wakes at the earliest live lease expiry (read from the database clock), and the
 *   sweep's commit wakes other instances.
 * - Attention waiters and event-stream readers wake on the commits that concern them.
 */

/**
 * Event types after which nothing became claimable (a lease was taken or extended, a note
 * written). The database does not announce these (migration 20261203170000): the instance that
 * committed one announces it to its own readers (announceLocally).
 */
const NOTHING_READIED = new Set(["lease.claimed", "lease.renewed", "note.added"]);
const ATTENTION_RESOLVED = "attention.resolved";
/** setTimeout's ceiling. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Claim attempts a dispatch round runs at once (the pool must keep room for other requests). */
const MAX_PARALLEL_CLAIMS = 8;
/** Past a lease's expiry before its claim is retried: the claim compares with the database clock, strictly. */
const EXPIRY_MARGIN_MS = 5;

interface ClaimWaiter {
  group: string;
  attempt: () => Promise<unknown>;
  settle: (outcome: { value: unknown } | { error: unknown }) => void;
  busy: boolean;
  timeUp: boolean;
  settled: boolean;
}

export class Wakeups {
  private readonly listener: CommitListener;
  private readonly claimWaiters = new Set<ClaimWaiter>();
  private claimsRunning = false;
  private retryPending = false;
  private rearmPending = false;
  private readiedGeneration = 0;
  private expiryTimer: NodeJS.Timeout | undefined;

  private readonly attentionWaiters = new Map<string, Set<() => void>>();
  private attentionRunning = false;
  private attentionAgain = false;

  private eventGeneration = 0;
  private readonly eventWatchers = new Set<() => void>();
  private closed = false;

  constructor(
    private readonly db: Db,
    connectionString: string,
    private readonly onError: (error: unknown) => void = (error) => console.error("[work-graph] wake-up:", error),
  ) {
    this.listener = new CommitListener(connectionString, (heard) => this.heard(heard), onError);
  }

  /** LISTEN is in place: a commit from now on wakes this instance's waiters. */
  ready(): Promise<void> {
    return this.listener.ready();
  }

  get listenerPid(): number | null {
    return this.listener.backendPid;
  }

  get waitingClaims(): number {
    return this.claimWaiters.size;
  }

  get waitingForAttention(): number {
    let count = 0;
    for (const waiters of this.attentionWaiters.values()) count += waiters.size;
    return count;
  }

  /** See announceLocally. */
  heardHere(types: string[]) {
    if (!this.closed) this.heard({ types: new Set(types) });
  }

  private heard(heard: Heard) {
    const types = heard === "unknown" ? null : heard.types;
    this.eventGeneration++;
    for (const wake of [...this.eventWatchers]) wake();
    const readied = types === null || [...types].some((type) => !NOTHING_READIED.has(type));
    if (readied) this.readiedGeneration++;
    if (this.claimWaiters.size > 0) this.pokeClaims(readied);
    if (this.attentionWaiters.size > 0 && (types === null || types.has(ATTENTION_RESOLVED))) this.pokeAttention();
  }

  // ---- claims ----------------------------------------------------------------------------

  /**
   * Runs `attempt` now; when it finds nothing, waits (no connection held) and lets it try
   * again each time a commit or an expiry may have made something claimable, until it
   * returns a result, throws, the time is up (null) or `signal` aborts (null). An attempt in
   * flight when the time runs out is awaited, so a lease it takes is never dropped. `group`
   * names what the attempt can find: attempts of one group that found nothing in a round
   * stand for the whole group.
   */
  async claimWhenReady<T>(group: string, waitMs: number, attempt: () => Promise<T | null>, signal?: AbortSignal): Promise<T | null> {
    await this.ready();
    const generation = this.readiedGeneration;
    const first = await attempt();
    if (first !== null || waitMs <= 0 || signal?.aborted || this.closed) return first;
    return new Promise<T | null>((resolve, reject) => {
      const stop = () => {
        if (waiter.busy) waiter.timeUp = true;
        else waiter.settle({ value: null });
      };
      const timer = setTimeout(stop, Math.min(waitMs, MAX_TIMER_MS));
      const waiter: ClaimWaiter = {
        group,
        attempt,
        busy: false,
        timeUp: false,
        settled: false,
        settle: (outcome) => {
          if (waiter.settled) return;
          waiter.settled = true;
          clearTimeout(timer);
          signal?.removeEventListener("abort", stop);
          this.claimWaiters.delete(waiter);
          if ("error" in outcome) reject(outcome.error);
          else resolve(outcome.value as T | null);
        },
      };
      signal?.addEventListener("abort", stop, { once: true });
      this.claimWaiters.add(waiter);
      // A commit heard between the first attempt and now was missed by it: try again at once.
      this.pokeClaims(this.readiedGeneration !== generation);
    });
  }

  private pokeClaims(retry: boolean) {
    if (retry) this.retryPending = true;
    else this.rearmPending = true;
    if (!this.claimsRunning) void this.runClaims();
  }

  private async runClaims() {
    this.claimsRunning = true;
    try {
      while (this.retryPending || this.rearmPending) {
        const retry = this.retryPending;
        this.retryPending = this.rearmPending = false;
        if (retry) await this.dispatchRound();
        await this.armExpiryTimer();
      }
    } finally {
      this.claimsRunning = false;
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
    const queue = [...this.claimWaiters];
    let width = 1;
    for (let next = 0; next < queue.length; ) {
      const batch: ClaimWaiter[] = [];
      while (batch.length < width && next < queue.length) {
        const waiter = queue[next++]!;
        if (!waiter.settled && !foundNothing.has(waiter.group)) batch.push(waiter);
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
      waiter.settle({ error });
      return true;
    } finally {
      waiter.busy = false;
    }
    if (result !== null) {
      waiter.settle({ value: result });
      return true;
    }
    if (waiter.timeUp) waiter.settle({ value: null });
    return false;
  }

  /** While claims wait, wake at the earliest live lease expiry (database clock). */
  private async armExpiryTimer() {
    clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    if (this.claimWaiters.size === 0 || this.closed) return;
    let untilExpiryMs: number | null;
    try {
      const [row] = await this.db.$queryRaw<{ ms: number | null }[]>`
        SELECT (extract(epoch FROM min(lease_expires_at) - clock_timestamp()) * 1000)::float8 AS ms
          FROM work_items WHERE lease_expires_at > statement_timestamp()`;
      untilExpiryMs = row?.ms ?? null;
    } catch (error) {
      // The database is unreachable: look again in a second (claims cannot succeed meanwhile anyway).
      this.onError(error);
      untilExpiryMs = 1_000;
    }
    if (untilExpiryMs === null || this.claimWaiters.size === 0 || this.closed) return;
    this.expiryTimer = setTimeout(() => this.pokeClaims(true), Math.min(Math.max(0, Math.ceil(untilExpiryMs)) + EXPIRY_MARGIN_MS, MAX_TIMER_MS));
  }

  // ---- attention -------------------------------------------------------------------------

  /** Resolves when attention request `id` is resolved, the time is up, or `signal` aborts. */
  async attentionResolved(id: string, waitMs: number, signal?: AbortSignal): Promise<void> {
    await this.ready();
    if (signal?.aborted || this.closed) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        const waiters = this.attentionWaiters.get(id);
        waiters?.delete(done);
        if (waiters?.size === 0) this.attentionWaiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, Math.min(waitMs, MAX_TIMER_MS));
      signal?.addEventListener("abort", done, { once: true });
      const waiters = this.attentionWaiters.get(id) ?? new Set();
      waiters.add(done);
      this.attentionWaiters.set(id, waiters);
      // It may have been resolved before LISTEN heard about it: look once now that we are registered.
      this.pokeAttention();
    });
  }

  private pokeAttention() {
    this.attentionAgain = true;
    if (!this.attentionRunning) void this.runAttention();
  }

  private async runAttention() {
    this.attentionRunning = true;
    try {
      while (this.attentionAgain && this.attentionWaiters.size > 0) {
        this.attentionAgain = false;
        const ids = [...this.attentionWaiters.keys()];
        let resolved: { id: string }[] = [];
        try {
          resolved = await this.db.$queryRaw<{ id: string }[]>`
            SELECT id::text FROM attention_requests WHERE id = ANY(${ids}::uuid[]) AND status = 'resolved'`;
        } catch (error) {
          this.onError(error);
        }
        for (const { id } of resolved) for (const wake of [...(this.attentionWaiters.get(id) ?? [])]) wake();
      }
    } finally {
      this.attentionRunning = false;
    }
  }

  // ---- event readers ---------------------------------------------------------------------

  /** A token for eventsSince: read it before reading the events table. */
  get eventsHeard(): number {
    return this.eventGeneration;
  }

  /** Resolves once a commit was heard after `generation` was taken, after `waitMs`, or on abort. */
  async eventsSince(generation: number, waitMs: number, signal?: AbortSignal): Promise<void> {
    if (this.eventGeneration !== generation || signal?.aborted || this.closed) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.eventWatchers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(waitMs, MAX_TIMER_MS));
      signal?.addEventListener("abort", done, { once: true });
      this.eventWatchers.add(done);
    });
  }

  /** Stops listening; everything still waiting returns as if its time were up. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.expiryTimer);
    for (const waiter of [...this.claimWaiters]) {
      if (waiter.busy) waiter.timeUp = true;
      else waiter.settle({ value: null });
    }
    for (const waiters of [...this.attentionWaiters.values()]) for (const wake of [...waiters]) wake();
    for (const wake of [...this.eventWatchers]) wake();
    await this.listener.close();
  }
}

const hubs = new WeakMap<Db, Wakeups>();

/**
 * This instance committed events of `types` that the database does not announce
 * (NOTHING_READIED): its event-stream readers hear of them at once. Nothing happens when the
 * instance has no hub (nobody here listens).
 */
export function announceLocally(db: Db, types: string[]): void {
  hubs.get(db)?.heardHere(types);
}

/** The wake-up hub of the app instance that owns `db` (created, not yet connected, on first use). */
export function wakeups(db: Db): Wakeups {
  let hub = hubs.get(db);
  if (!hub) {
    hub = new Wakeups(db, connectionStringOf(db));
    hubs.set(db, hub);
  }
  return hub;
}

/** Closes the hub of `db`, if it has one (shutdown, tests). */
export async function stopWakeups(db: Db): Promise<void> {
  const hub = hubs.get(db);
  hubs.delete(db);
  await hub?.close();
}
