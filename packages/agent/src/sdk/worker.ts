import type {
  AttentionRequest, AttentionRequestInput, AttentionRequestResult, ClaimResult, DecomposeInput, DecomposeResult, FinishResult, Lease,
  Note, WorkGraphClient, WorkItem,
} from "./client";
import { WorkGraphError, toWorkGraphError } from "./errors";

/** What a handler returns: release with evidence, cancel the item, or hand it back unfinished. */
export type HandlerResult =
  | { evidence: string; links?: string[] }
  | { cancel: string }
  | { abandon: true }
  | undefined
  | void;

type LeaseFields = "leaseId" | "epoch" | "workerId" | "idempotencyKey" | "key";

/** What the handler gets for one claimed item. Every helper writes with this item's lease, and only while it is live. */
export interface WorkContext {
  readonly workItem: WorkItem;
  /** The lease as of its last renewal. */
  readonly lease: Lease;
  /** Attention requests raised under the item's previous lease, with the human's answers. */
  readonly attention: AttentionRequest[];
  /**
   * Aborted the moment the lease is lost (a call was fenced with LEASE_NOT_CURRENT, or it
   * could not be renewed before it expired; `signal.reason` is the WorkGraphError), or on
   * shutdown with `onShutdown: "cancel" | "abandon"`. Stop promptly: nothing more is written with this lease.
   */
  readonly signal: AbortSignal;
  /** Adds a progress note (idempotent across network retries). */
  note(content: string): Promise<Note>;
  /** Asks a human. A blocking request (the default) ends the lease: return afterwards; nothing more is written. */
  requestAttention(input: Omit<AttentionRequestInput, LeaseFields>): Promise<AttentionRequestResult>;
  /**
   * Splits the item into children; ends the lease. With `claimChildId` the worker gets a lease
   * on that child and handles it next (after this handler returns).
   */
  decompose(input: Omit<DecomposeInput, LeaseFields | "durationSeconds">): Promise<DecomposeResult>;
  /** Renews right now (renewals also happen automatically). */
  renew(): Promise<Lease>;
}

export type WorkHandler = (context: WorkContext) => Promise<HandlerResult> | HandlerResult;

/**
 * On SIGINT/SIGTERM or `signal` abort, the worker stops claiming, and the item in hand:
 * - `finish` (default): the handler runs to the end and its result is written as usual;
 * - `cancel`: the handler's signal aborts; unless it still returns `{ evidence }`, the item is cancelled (`leases.cancel`, terminal);
 * - `abandon`: the handler's signal aborts; unless it still returns a result, the lease is handed back
 *   (shortened to expire in 1 s; the item is ready again right after, outcome `expired`).
 * A second SIGINT/SIGTERM while finishing escalates to `abandon`.
 */
export type ShutdownMode = "finish" | "cancel" | "abandon";

export type FinishOutcome = "released" | "cancelled" | "attention_requested" | "decomposed" | "abandoned" | "lost" | "failed";

export type WorkerEvent =
  | { type: "claimed"; workItem: WorkItem; lease: Lease; attempts: number }
  | { type: "renewed"; workItemId: string; lease: Lease }
  | { type: "renew-failed"; workItemId: string; error: WorkGraphError }
  | { type: "lost"; workItemId: string; lease: Lease; error: WorkGraphError }
  | { type: "handler-error"; workItemId: string; error: unknown }
  | { type: "finished"; workItemId: string; lease: Lease; outcome: FinishOutcome }
  | { type: "idle"; delayMs: number }
  | { type: "error"; during: "claim" | "finish"; error: WorkGraphError }
  | { type: "stopping"; cause: string };

export interface WorkerSummary {
  claimed: number;
  released: number;
  cancelled: number;
  attentionRequested: number;
  decomposed: number;
  abandoned: number;
  lost: number;
  failed: number;
  handlerErrors: number;
  /** "signal", "SIGINT", "SIGTERM", "maxItems", "idle" or "drained" (an operator drained the worker). */
  stoppedBy: string;
}

export interface RetryPolicy {
  /** Attempts per call when there is no answer (NETWORK) or the server failed (INTERNAL); default 5. */
  attempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export interface RunWorkerOptions {
  client: WorkGraphClient;
  handler: WorkHandler;
  /** Lease duration requested on claim and on every renewal (default 300). */
  durationSeconds?: number;
  /** Renewal period (default a third of the duration). */
  renewIntervalMs?: number;
  /**
   * How long each claim waits on the server for work when nothing is ready (`leases.claim`
   * `waitSeconds`, 0–60; default 20): the server answers the moment an item becomes ready
   * for this worker, so an idle worker makes one request per wait instead of polling. Keep it
   * below the client's `timeoutMs` (30 s by default). 0 = poll with pollIntervalMs backoff.
   */
  waitSeconds?: number;
  /** With `waitSeconds: 0`, and after failed claims: first wait (default 1000); doubles per empty poll, with jitter, up to maxPollIntervalMs. */
  pollIntervalMs?: number;
  maxPollIntervalMs?: number;
  /** Aborting it stops the worker like SIGTERM. */
  signal?: AbortSignal;
  onShutdown?: ShutdownMode;
  /** Install SIGINT/SIGTERM handlers for the duration of the run (default true). */
  handleProcessSignals?: boolean;
  /** Only claim direct children of this item. */
  parentId?: string;
  /**
   * When the handler throws: `attention` (default) asks a human with a blocking `help` request
   * carrying the error, so a failing item does not bounce between workers; `abandon` hands the lease back.
   */
  onHandlerError?: "attention" | "abandon";
  /** Stop after this many claimed items. */
  maxItems?: number;
  /** Stop once the queue has been empty for this long. */
  stopWhenIdleMs?: number;
  onEvent?: (event: WorkerEvent) => void;
  retry?: RetryPolicy;
}

const now = () => performance.now();
const randomKey = () => globalThis.crypto.randomUUID();

function sleep(ms: number, wake?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (wake?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      wake?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    wake?.addEventListener("abort", done, { once: true });
  });
}

/** Half-to-full jitter around an exponential step. */
const jittered = (base: number, step: number, max: number) => Math.min(max, base * 2 ** step) * (0.5 + Math.random() / 2);

async function withRetry<T>(policy: Required<RetryPolicy>, call: (attempt: number) => Promise<T>, onRetry?: (error: WorkGraphError) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(attempt);
    } catch (thrown) {
      const error = toWorkGraphError(thrown);
      if (!error.retryable || attempt >= policy.attempts) throw error;
      onRetry?.(error);
      await sleep(jittered(policy.baseDelayMs, attempt - 1, policy.maxDelayMs));
    }
  }
}

interface Settings {
  client: WorkGraphClient;
  durationSeconds: number;
  renewIntervalMs: number;
  retry: Required<RetryPolicy>;
  emit: (event: WorkerEvent) => void;
}

type SessionState = "live" | "ending" | "ended" | "lost";

interface HeldLease {
  lease: Lease;
  grantedNoEarlierThan: number;
}

/**
 * One lease held by the worker: automatic renewals, a local expiry watchdog, and the single
 * gate every write with the lease goes through. Once the lease is lost or ended, the gate
 * refuses locally: no request carrying it is sent again.
 */
class LeaseSession {
  state: SessionState = "live";
  lease: Lease;
  endedBy: FinishOutcome | null = null;
  /** A child lease handed over by decompose({ claimChildId }). */
  child: HeldLease | null = null;
  shutdownRequested = false;
  readonly controller = new AbortController();
  private renewTimer: ReturnType<typeof setTimeout> | undefined;
  private watchdog: ReturnType<typeof setTimeout> | undefined;
  private renewing: Promise<void> | null = null;
  private deadline: number;

  constructor(
    private readonly settings: Settings,
    readonly workItem: WorkItem,
    lease: Lease,
    /** performance.now() when the request that created the lease was first sent: the expiry cannot be earlier than this + duration. */
    grantedNoEarlierThan: number,
  ) {
    this.lease = lease;
    this.deadline = grantedNoEarlierThan + settings.durationSeconds * 1000;
  }

  start() {
    this.armWatchdog();
    this.scheduleRenewal(this.settings.renewIntervalMs);
  }

  private armWatchdog() {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      if (this.state !== "live" && this.state !== "ending") return;
      this.lose(new WorkGraphError("LEASE_NOT_CURRENT", `lease ${this.lease.id} (epoch ${this.lease.epoch}) could not be renewed before it expired`, {
        code: "CONFLICT",
        detail: { kind: "expired", leaseId: this.lease.id, epoch: this.lease.epoch, local: true },
      }));
    }, Math.max(0, this.deadline - now()));
  }

  private scheduleRenewal(delayMs: number) {
    clearTimeout(this.renewTimer);
    if (this.state !== "live") return;
    this.renewTimer = setTimeout(() => {
      this.renewing = this.renewOnce().finally(() => {
        this.renewing = null;
      });
    }, delayMs);
  }

  private async renewOnce(): Promise<void> {
    if (this.state !== "live") return;
    const sentAt = now();
    try {
      const lease = await this.settings.client.leases.renew.mutate({
        leaseId: this.lease.id, epoch: this.lease.epoch, durationSeconds: this.settings.durationSeconds,
      });
      if (this.state !== "live" && this.state !== "ending") return;
      this.lease = lease;
      this.deadline = sentAt + this.settings.durationSeconds * 1000;
      this.armWatchdog();
      this.settings.emit({ type: "renewed", workItemId: this.workItem.id, lease });
      this.scheduleRenewal(this.settings.renewIntervalMs);
    } catch (thrown) {
      const error = toWorkGraphError(thrown);
      if (this.state !== "live") return;
      if (!error.retryable) {
        // Fenced, or a refusal that means we may not write any more (revoked token…): the lease is gone for us.
        this.lose(error);
        return;
      }
      this.settings.emit({ type: "renew-failed", workItemId: this.workItem.id, error });
      this.scheduleRenewal(Math.max(100, Math.min(1000, this.settings.renewIntervalMs / 3)));
    }
  }

  private stopTimers() {
    clearTimeout(this.renewTimer);
    clearTimeout(this.watchdog);
  }

  /** Fenced: abort the handler at once and never write with this lease again. */
  lose(error: WorkGraphError) {
    if (this.state === "lost" || this.state === "ended") return;
    this.state = "lost";
    this.stopTimers();
    this.settings.emit({ type: "lost", workItemId: this.workItem.id, lease: this.lease, error });
    this.controller.abort(error);
  }

  private markEnded(outcome: FinishOutcome) {
    this.state = "ended";
    this.endedBy = outcome;
    this.stopTimers();
  }

  requestShutdown() {
    this.shutdownRequested = true;
    if (!this.controller.signal.aborted) this.controller.abort(new DOMException("the worker is shutting down", "AbortError"));
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

  private isLost(): boolean {
    return this.state === "lost";
  }

  private refusal(): WorkGraphError {
    const kind = this.state === "lost" ? "expired" : "ended";
    return new WorkGraphError("LEASE_NOT_CURRENT", `not sent: lease ${this.lease.id} (epoch ${this.lease.epoch}) is no longer live for this worker (${this.state})`, {
      code: "CONFLICT",
      detail: { kind, leaseId: this.lease.id, epoch: this.lease.epoch, local: true },
    });
  }

  /**
   * The gate for every write with this lease. `ends` says whether a successful result ends
   * the lease (then renewals stop first, and resume if the write is refused for another reason).
   */
  async write<T>(
    call: () => Promise<T>,
    ends: false | ((result: T) => FinishOutcome | null),
    options: { final?: boolean; retry?: boolean } = {},
  ): Promise<T> {
    if (this.state !== "live" && !(options.final && this.state === "ending")) throw this.refusal();
    if (ends) await this.quiesce();
    if (this.isLost()) throw this.refusal(); // lost while a renewal was in flight
    try {
      const result = options.retry === false ? await call() : await withRetry(this.settings.retry, () => call());
      if (ends) {
        const outcome = ends(result);
        if (outcome) this.markEnded(outcome);
        else this.resume();
      }
      return result;
    } catch (thrown) {
      const error = toWorkGraphError(thrown);
      if (error.fenced) this.lose(error);
      else if (ends && !options.final) this.resume();
      throw error;
    }
  }

  /** Renew now (the handler's `renew()`). */
  renewNow(): Promise<Lease> {
    return this.write(async () => {
      const sentAt = now();
      const lease = await this.settings.client.leases.renew.mutate({
        leaseId: this.lease.id, epoch: this.lease.epoch, durationSeconds: this.settings.durationSeconds,
      });
      this.lease = lease;
      this.deadline = sentAt + this.settings.durationSeconds * 1000;
      this.armWatchdog();
      return lease;
    }, false);
  }

  /**
   * release / cancel have no idempotency key: when a retry after a lost answer is refused as
   * `ended`, read the lease back; if it ended the way we asked, the first attempt landed.
   */
  async finish(kind: "release" | "cancel", input: { evidence: string; links?: string[] } | { reason: string }): Promise<FinishResult> {
    const { client } = this.settings;
    const ref = { leaseId: this.lease.id, epoch: this.lease.epoch };
    let retried = false;
    const expected = kind === "release" ? "released" : "cancelled";
    return this.write(async () => {
      try {
        return await withRetry(this.settings.retry, () =>
          kind === "release"
            ? client.leases.release.mutate({ ...ref, ...(input as { evidence: string; links?: string[] }) })
            : client.leases.cancel.mutate({ ...ref, ...(input as { reason: string }) }),
          () => { retried = true; },
        );
      } catch (thrown) {
        const error = toWorkGraphError(thrown);
        if (retried && error.leaseKind === "ended") {
          const lease = await client.leases.get.query({ leaseId: ref.leaseId });
          if (lease.outcome === expected) return { lease, workItem: await client.workItems.get.query({ id: lease.workItemId }) };
        }
        throw error;
      }
    }, () => expected, { final: true, retry: false });
  }

  /** Hands the item back without finishing it: the lease is shortened to expire in 1 s. */
  async handBack(): Promise<void> {
    await this.write(
      () => this.settings.client.leases.renew.mutate({ leaseId: this.lease.id, epoch: this.lease.epoch, durationSeconds: 1 }),
      () => "abandoned",
      { final: true },
    );
  }

  context(attention: AttentionRequest[]): WorkContext {
    const { client } = this.settings;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the context's `lease` getter must read the live session
    const session = this;
    const ref = () => ({ leaseId: session.lease.id, epoch: session.lease.epoch });
    return {
      workItem: this.workItem,
      get lease() {
        return session.lease;
      },
      attention,
      signal: this.controller.signal,
      note(content) {
        const key = randomKey();
        return session.write(() => client.leases.note.mutate({ ...ref(), content, idempotencyKey: key }), false);
      },
      requestAttention(input) {
        const key = randomKey();
        const blocking = input.blocking ?? true;
        return session.write(
          () => client.attention.request.mutate({ ...input, ...ref(), blocking, idempotencyKey: key }),
          blocking ? (result) => (result.endedLease ? "attention_requested" : null) : false,
        );
      },
      async decompose(input) {
        const key = randomKey();
        const sentAt = now();
        const result = await session.write(
          () => client.leases.decompose.mutate({ ...input, ...ref(), durationSeconds: session.settings.durationSeconds, idempotencyKey: key }),
          () => "decomposed",
        );
        if (result.childLease) session.child = { lease: result.childLease, grantedNoEarlierThan: sentAt };
        return result;
      },
      renew: () => session.renewNow(),
    };
  }
}

/**
 * Runs an agent loop until stopped: claim the next ready item (with an idempotency key, so a
 * retried claim after a lost answer returns the same lease instead of taking a second item) →
 * `handler` → write its result with the lease, renewing the lease automatically meanwhile.
 * Resolves with a summary once stopped (SIGINT/SIGTERM, `signal`, `maxItems`, `stopWhenIdleMs`, or
 * WORKER_DRAINED on a claim: an operator drained the worker, so it finishes what it holds and exits);
 * a revoked lease aborts the handler like any fence;
 * rejects only on a refusal no retry can fix (bad token, forbidden, invalid options).
 */
export async function runWorker(options: RunWorkerOptions): Promise<WorkerSummary> {
  const durationSeconds = options.durationSeconds ?? 300;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const waitSeconds = Math.min(60, Math.max(0, options.waitSeconds ?? 20));
  const maxPollIntervalMs = Math.max(pollIntervalMs, options.maxPollIntervalMs ?? 15_000);
  const shutdownMode: ShutdownMode = options.onShutdown ?? "finish";
  const emit = (event: WorkerEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // an observer's bug must not break the worker
    }
  };
  const settings: Settings = {
    client: options.client,
    durationSeconds,
    renewIntervalMs: options.renewIntervalMs ?? Math.max(100, (durationSeconds * 1000) / 3),
    retry: { attempts: 5, baseDelayMs: 250, maxDelayMs: 5000, ...options.retry },
    emit,
  };
  const summary: WorkerSummary = {
    claimed: 0, released: 0, cancelled: 0, attentionRequested: 0, decomposed: 0, abandoned: 0, lost: 0, failed: 0, handlerErrors: 0, stoppedBy: "",
  };

  const wake = new AbortController();
  let stopping = false;
  let current: LeaseSession | null = null;
  let forced = false;
  const stop = (cause: string) => {
    if (stopping) {
      if (cause === "SIGINT" || cause === "SIGTERM") {
        forced = true;
        current?.requestShutdown();
      }
      return;
    }
    stopping = true;
    summary.stoppedBy = cause;
    emit({ type: "stopping", cause });
    wake.abort();
    if (shutdownMode !== "finish") current?.requestShutdown();
  };

  const onSigint = () => stop("SIGINT");
  const onSigterm = () => stop("SIGTERM");
  const onAbort = () => stop("signal");
  const handleSignals = options.handleProcessSignals ?? true;
  if (handleSignals) {
    process.on("SIGINT", onSigint);
    process.on("SIGTERM", onSigterm);
  }
  if (options.signal?.aborted) stop("signal");
  else options.signal?.addEventListener("abort", onAbort, { once: true });

  /** Kept until the server gives a definite answer, so a retried claim replays instead of taking another item. */
  let pendingKey: { key: string; since: number } | null = null;

  /**
   * A claim that waits (up to `wait` seconds) on the server. Stopping aborts the wait at once;
   * only a claim that took an item at that very instant loses its answer, and that lease
   * simply expires.
   */
  async function claimNext(wait: number): Promise<{ claim: ClaimResult; grantedNoEarlierThan: number; attempts: number } | null> {
    pendingKey ??= { key: randomKey(), since: now() };
    const { key, since } = pendingKey;
    let attempts = 0;
    try {
      const claim = await withRetry(settings.retry, async () => {
        attempts++;
        if (stopping) return null;
        const input = { durationSeconds, parentId: options.parentId, idempotencyKey: key };
        if (wait <= 0) return options.client.leases.claim.mutate(input);
        try {
          return await options.client.leases.claim.mutate({ ...input, waitSeconds: wait }, { signal: wake.signal });
        } catch (error) {
          if (wake.signal.aborted) return null;
          throw error;
        }
      }, (error) => emit({ type: "error", during: "claim", error }));
      pendingKey = null;
      return claim ? { claim, grantedNoEarlierThan: since, attempts } : null;
    } catch (thrown) {
      const error = toWorkGraphError(thrown);
      if (!error.retryable) pendingKey = null;
      throw error;
    }
  }

  async function finishWith(session: LeaseSession, action: () => Promise<unknown>, outcome: FinishOutcome) {
    try {
      await action();
      session.endedBy = outcome;
    } catch (thrown) {
      const error = toWorkGraphError(thrown);
      if (session.state === "lost") return;
      emit({ type: "error", during: "finish", error });
      // e.g. blank evidence (VALIDATION): do not sit on the item until it expires.
      if (outcome !== "abandoned" && session.state !== "ended") {
        try {
          await session.handBack();
          session.endedBy = "failed";
          return;
        } catch {
          // the lease will expire by itself
        }
      }
      session.endedBy = "failed";
    }
  }

  /** Handles one leased item; returns the child lease to handle next (decompose with claimChildId), if any. */
  async function work(workItem: WorkItem, held: HeldLease, attention: AttentionRequest[]): Promise<HeldLease | null> {
    const session = new LeaseSession(settings, workItem, held.lease, held.grantedNoEarlierThan);
    current = session;
    session.start();
    try {
      if (stopping) {
        // Claimed while stopping: do not start new work, give it back.
        await finishWith(session, () => session.handBack(), "abandoned");
      } else {
        let result: HandlerResult;
        let failure: { error: unknown } | null = null;
        try {
          result = await options.handler(session.context(attention));
        } catch (error) {
          failure = { error };
        }
        await session.quiesce();
        if (session.state === "ending") {
          const cancelOnShutdown = session.shutdownRequested && shutdownMode === "cancel" && !forced;
          if (result && "evidence" in result) {
            await finishWith(session, () => session.finish("release", { evidence: result.evidence, links: result.links }), "released");
          } else if (result && "cancel" in result) {
            await finishWith(session, () => session.finish("cancel", { reason: result.cancel }), "cancelled");
          } else if (session.shutdownRequested) {
            if (cancelOnShutdown) {
              await finishWith(session, () => session.finish("cancel", { reason: `worker shut down (${summary.stoppedBy})` }), "cancelled");
            } else {
              await finishWith(session, () => session.handBack(), "abandoned");
            }
          } else if (failure) {
            summary.handlerErrors++;
            emit({ type: "handler-error", workItemId: workItem.id, error: failure.error });
            if ((options.onHandlerError ?? "attention") === "attention") {
              const message = failure.error instanceof Error ? failure.error.message : String(failure.error);
              const stack = failure.error instanceof Error ? failure.error.stack ?? null : null;
              await finishWith(session, () => session.write(
                () => options.client.attention.request.mutate({
                  leaseId: session.lease.id, epoch: session.lease.epoch, kind: "help", blocking: true, idempotencyKey: randomKey(),
                  question: `The worker failed on ${workItem.id}: ${message}`.slice(0, 20_000), context: stack,
                }),
                () => "attention_requested",
                { final: true },
              ), "attention_requested");
            } else {
              await finishWith(session, () => session.handBack(), "abandoned");
            }
          } else {
            await finishWith(session, () => session.handBack(), "abandoned");
          }
        } else if (failure && session.state !== "lost" && !session.shutdownRequested) {
          summary.handlerErrors++;
          emit({ type: "handler-error", workItemId: workItem.id, error: failure.error });
        }
      }
    } finally {
      await session.quiesce().catch(() => {});
      current = null;
    }
    const outcome: FinishOutcome = session.state === "lost" ? "lost" : session.endedBy ?? "failed";
    const counter = {
      released: "released", cancelled: "cancelled", attention_requested: "attentionRequested", decomposed: "decomposed",
      abandoned: "abandoned", lost: "lost", failed: "failed",
    } as const satisfies Record<FinishOutcome, keyof WorkerSummary>;
    summary[counter[outcome]]++;
    emit({ type: "finished", workItemId: workItem.id, lease: session.lease, outcome });
    return outcome === "decomposed" ? session.child : null;
  }

  let emptyPolls = 0;
  let idleSince: number | null = null;
  try {
    while (!stopping) {
      if (options.maxItems !== undefined && summary.claimed >= options.maxItems) {
        stop("maxItems");
        break;
      }
      let claimed: Awaited<ReturnType<typeof claimNext>>;
      // Waiting never outlasts stopWhenIdleMs.
      const idleLeftMs = options.stopWhenIdleMs === undefined ? Infinity : options.stopWhenIdleMs - (idleSince === null ? 0 : now() - idleSince);
      const askedAt = now();
      try {
        claimed = await claimNext(Math.min(waitSeconds, Math.max(0, idleLeftMs) / 1000));
      } catch (thrown) {
        const error = toWorkGraphError(thrown);
        if (error.drained) {
          // Nothing is held between claims (the item in hand was finished first): just exit.
          stop("drained");
          break;
        }
        if (!error.retryable) throw error;
        await sleep(jittered(pollIntervalMs, Math.min(emptyPolls++, 10), maxPollIntervalMs), wake.signal);
        continue;
      }
      if (!claimed) {
        idleSince ??= askedAt;
        if (options.stopWhenIdleMs !== undefined && now() - idleSince >= options.stopWhenIdleMs) {
          stop("idle");
          break;
        }
        // After a server-side wait, ask again at once; polling backs off.
        const delayMs = waitSeconds > 0 ? 0 : jittered(pollIntervalMs, Math.min(emptyPolls++, 10), maxPollIntervalMs);
        emit({ type: "idle", delayMs });
        if (delayMs > 0) await sleep(delayMs, wake.signal);
        continue;
      }
      emptyPolls = 0;
      idleSince = null;
      summary.claimed++;
      emit({ type: "claimed", workItem: claimed.claim.workItem, lease: claimed.claim.lease, attempts: claimed.attempts });
      const { claim, grantedNoEarlierThan } = claimed;
      let next = await work(claim.workItem, { lease: claim.lease, grantedNoEarlierThan }, claim.attention);
      while (next) {
        const held: HeldLease = next;
        summary.claimed++;
        let child: WorkItem;
        try {
          child = await withRetry(settings.retry, () => options.client.workItems.get.query({ id: held.lease.workItemId }));
        } catch {
          break; // the child lease expires by itself
        }
        emit({ type: "claimed", workItem: child, lease: held.lease, attempts: 1 });
        next = await work(child, held, []);
      }
    }
  } finally {
    if (handleSignals) {
      process.off("SIGINT", onSigint);
      process.off("SIGTERM", onSigterm);
    }
    options.signal?.removeEventListener("abort", onAbort);
  }
  return summary;
}
