import type { AttentionRequest, Lease, Note, WorkItem } from "@work-graph/contract";
import type { AttentionRequestInput, AttentionRequestResult, ClaimResult, DecomposeInput, DecomposeResult, WorkGraphClient } from "./client";
import { toWorkGraphError, type WorkGraphError } from "./errors";
import { HeldLease } from "./lease-holder";
import { backoffDelay, retryUnanswered, sleep, type RetryOptions, type RetryPolicy } from "./retry";

/**
 * What a handler returns: release with evidence, cancel the item, or hand it back unfinished
 * (`leases.handBack`, outcome `returned`): `{ handBack: reason, retryAfterSeconds? }` when this
 * worker cannot do it (a missing tool or access, a rate limit: try again later), `{ abandon: true }`
 * or nothing for a plain hand-back.
 */
export type HandlerResult =
  | { evidence: string; links?: string[] }
  | { cancel: string }
  | { handBack: string; retryAfterSeconds?: number }
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
 * - `abandon`: the handler's signal aborts; unless it still returns a result, the item is handed back
 *   (`leases.handBack`: outcome `returned`, the item is ready again at once for another worker).
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
  /** Handed back unfinished (`leases.handBack`, outcome `returned`): nothing, `{ abandon }`, `{ handBack }`, shutdown with "abandon". */
  abandoned: number;
  lost: number;
  failed: number;
  handlerErrors: number;
  /** "signal", "SIGINT", "SIGTERM", "maxItems", "idle" or "drained" (an operator drained the worker). */
  stoppedBy: string;
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
  /** Claim only in this project (default: every project the token may see). */
  projectId?: string;
  /**
   * Claim only items whose `requires` are all among these (a subset of the token's capabilities,
   * else every claim fails FORBIDDEN). Default: the token's capabilities, decided by the server.
   */
  capabilities?: string[];
  /**
   * When the handler throws: `attention` (default) asks a human with a blocking `help` request
   * carrying the error, so a failing item does not bounce between workers; `abandon` hands the item back
   * (`leases.handBack` with the error as the reason).
   */
  onHandlerError?: "attention" | "abandon";
  /** Stop after this many claimed items. */
  maxItems?: number;
  /** Stop once the queue has been empty for this long. */
  stopWhenIdleMs?: number;
  onEvent?: (event: WorkerEvent) => void;
  /** Tries per call when there is no answer (NETWORK) or the server failed (INTERNAL, UNAVAILABLE): default 5, 250 ms doubling up to 5 s. */
  retry?: RetryOptions;
}

const now = () => performance.now();
const randomKey = () => globalThis.crypto.randomUUID();

interface Settings {
  client: WorkGraphClient;
  durationSeconds: number;
  renewIntervalMs: number;
  retry: RetryPolicy;
  emit: (event: WorkerEvent) => void;
}

interface ObtainedLease {
  lease: Lease;
  /** performance.now() when the request that obtained it was first sent. */
  grantedAt: number;
}

/**
 * One claimed item in the worker's hands: its lease (held, renewed and gated by HeldLease), the
 * handler's abort signal, and how the lease ended.
 */
class ItemRun {
  readonly held: HeldLease;
  endedBy: FinishOutcome | null = null;
  /** A child lease handed over by decompose({ claimChildId }). */
  child: ObtainedLease | null = null;
  shutdownRequested = false;
  readonly controller = new AbortController();

  constructor(
    private readonly settings: Settings,
    readonly workItem: WorkItem,
    obtained: ObtainedLease,
  ) {
    const workItemId = workItem.id;
    this.held = new HeldLease(settings.client, obtained.lease, {
      durationSeconds: settings.durationSeconds,
      grantedAt: obtained.grantedAt,
      renewIntervalMs: settings.renewIntervalMs,
      retry: settings.retry,
      onRenewed: (lease) => settings.emit({ type: "renewed", workItemId, lease }),
      onRenewFailed: (error) => settings.emit({ type: "renew-failed", workItemId, error }),
      onLost: (error) => {
        settings.emit({ type: "lost", workItemId, lease: this.held.lease, error });
        this.controller.abort(error);
      },
    });
  }

  requestShutdown() {
    this.shutdownRequested = true;
    if (!this.controller.signal.aborted) this.controller.abort(new DOMException("the worker is shutting down", "AbortError"));
  }

  /** A write with the item's lease; `ends` names the outcome when a result ended the lease. */
  write<T>(call: () => Promise<T>, ends: false | ((result: T) => FinishOutcome | null), options: { final?: boolean } = {}): Promise<T> {
    return this.held.write(call, {
      ...options,
      ends: ends
        ? (result) => {
          const outcome = ends(result);
          if (outcome) this.endedBy = outcome;
          return outcome !== null;
        }
        : undefined,
    });
  }

  context(attention: AttentionRequest[]): WorkContext {
    const { client } = this.settings;
    const { held } = this;
    const ref = () => ({ leaseId: held.lease.id, epoch: held.lease.epoch });
    return {
      workItem: this.workItem,
      get lease() {
        return held.lease;
      },
      attention,
      signal: this.controller.signal,
      note: (content) => {
        const key = randomKey();
        return this.write(() => client.leases.note.mutate({ ...ref(), content, idempotencyKey: key }), false);
      },
      requestAttention: (input) => {
        const key = randomKey();
        const blocking = input.blocking ?? true;
        return this.write(
          () => client.attention.request.mutate({ ...input, ...ref(), blocking, idempotencyKey: key }),
          blocking ? (result) => (result.endedLease ? "attention_requested" : null) : false,
        );
      },
      decompose: async (input) => {
        const key = randomKey();
        const sentAt = now();
        const result = await this.write(
          () => client.leases.decompose.mutate({ ...input, ...ref(), durationSeconds: this.settings.durationSeconds, idempotencyKey: key }),
          () => "decomposed",
        );
        if (result.childLease) this.child = { lease: result.childLease, grantedAt: sentAt };
        return result;
      },
      renew: () => held.renewNow(),
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
  const polling = { baseDelayMs: pollIntervalMs, maxDelayMs: Math.max(pollIntervalMs, options.maxPollIntervalMs ?? 15_000) };
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
  let current: ItemRun | null = null;
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
  async function claimNext(wait: number): Promise<{ claim: ClaimResult; grantedAt: number; attempts: number } | null> {
    pendingKey ??= { key: randomKey(), since: now() };
    const { key, since } = pendingKey;
    let attempts = 0;
    try {
      const claim = await retryUnanswered(async (attempt) => {
        attempts = attempt;
        if (stopping) return null;
        const input = { durationSeconds, parentId: options.parentId, projectId: options.projectId, capabilities: options.capabilities, idempotencyKey: key };
        if (wait <= 0) return options.client.leases.claim.mutate(input);
        try {
          return await options.client.leases.claim.mutate({ ...input, waitSeconds: wait }, { signal: wake.signal });
        } catch (error) {
          if (wake.signal.aborted) return null;
          throw error;
        }
      }, settings.retry, (error) => emit({ type: "error", during: "claim", error }));
      pendingKey = null;
      return claim ? { claim, grantedAt: since, attempts } : null;
    } catch (thrown) {
      const error = toWorkGraphError(thrown);
      if (!error.retryable) pendingKey = null;
      throw error;
    }
  }

  async function finishWith(run: ItemRun, action: () => Promise<unknown>, outcome: FinishOutcome) {
    try {
      await action();
      run.endedBy = outcome;
    } catch (thrown) {
      const error = toWorkGraphError(thrown);
      if (run.held.state === "lost") return;
      emit({ type: "error", during: "finish", error });
      // e.g. blank evidence (VALIDATION): do not sit on the item until it expires.
      if (outcome !== "abandoned" && run.held.state !== "ended") {
        try {
          await run.held.handBack({ reason: `the worker could not record its result (${error.reason}: ${error.message})`.slice(0, 10_000) });
          run.endedBy = "failed";
          return;
        } catch {
          // the lease will expire by itself
        }
      }
      run.endedBy = "failed";
    }
  }

  /** Handles one leased item; returns the child lease to handle next (decompose with claimChildId), if any. */
  async function work(workItem: WorkItem, obtained: ObtainedLease, attention: AttentionRequest[]): Promise<ObtainedLease | null> {
    const run = new ItemRun(settings, workItem, obtained);
    const { held } = run;
    current = run;
    held.start();
    try {
      if (stopping) {
        // Claimed while stopping: do not start new work, give it back.
        await finishWith(run, () => held.handBack({ reason: "claimed while the worker was stopping" }), "abandoned");
      } else {
        let result: HandlerResult;
        let failure: { error: unknown } | null = null;
        try {
          result = await options.handler(run.context(attention));
        } catch (error) {
          failure = { error };
        }
        await held.quiesce();
        if (held.state === "ending") {
          const cancelOnShutdown = run.shutdownRequested && shutdownMode === "cancel" && !forced;
          if (result && "evidence" in result) {
            await finishWith(run, () => held.finish("release", { evidence: result.evidence, links: result.links }), "released");
          } else if (result && "cancel" in result) {
            await finishWith(run, () => held.finish("cancel", { reason: result.cancel }), "cancelled");
          } else if (result && "handBack" in result) {
            await finishWith(run, () => held.handBack({ reason: result.handBack, retryAfterSeconds: result.retryAfterSeconds }), "abandoned");
          } else if (run.shutdownRequested) {
            if (cancelOnShutdown) {
              await finishWith(run, () => held.finish("cancel", { reason: `worker shut down (${summary.stoppedBy})` }), "cancelled");
            } else {
              await finishWith(run, () => held.handBack({ reason: `the worker shut down (${summary.stoppedBy})` }), "abandoned");
            }
          } else if (failure) {
            summary.handlerErrors++;
            emit({ type: "handler-error", workItemId: workItem.id, error: failure.error });
            if ((options.onHandlerError ?? "attention") === "attention") {
              const message = failure.error instanceof Error ? failure.error.message : String(failure.error);
              const stack = failure.error instanceof Error ? failure.error.stack ?? null : null;
              await finishWith(run, () => run.write(
                () => options.client.attention.request.mutate({
                  leaseId: held.lease.id, epoch: held.lease.epoch, kind: "help", blocking: true, idempotencyKey: randomKey(),
                  question: `The worker failed on ${workItem.id}: ${message}`.slice(0, 20_000), context: stack,
                }),
                () => "attention_requested",
                { final: true },
              ), "attention_requested");
            } else {
              const message = failure.error instanceof Error ? failure.error.message : String(failure.error);
              await finishWith(run, () => held.handBack({ reason: `the worker failed: ${message}`.slice(0, 10_000) }), "abandoned");
            }
          } else {
            await finishWith(run, () => held.handBack({ reason: "the worker returned the item unfinished" }), "abandoned");
          }
        } else if (failure && held.state !== "lost" && !run.shutdownRequested) {
          summary.handlerErrors++;
          emit({ type: "handler-error", workItemId: workItem.id, error: failure.error });
        }
      }
    } finally {
      await held.quiesce().catch(() => {});
      current = null;
    }
    const outcome: FinishOutcome = held.state === "lost" ? "lost" : run.endedBy ?? "failed";
    const counter = {
      released: "released", cancelled: "cancelled", attention_requested: "attentionRequested", decomposed: "decomposed",
      abandoned: "abandoned", lost: "lost", failed: "failed",
    } as const satisfies Record<FinishOutcome, keyof WorkerSummary>;
    summary[counter[outcome]]++;
    emit({ type: "finished", workItemId: workItem.id, lease: held.lease, outcome });
    return outcome === "decomposed" ? run.child : null;
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
        await sleep(backoffDelay(polling, Math.min(emptyPolls++, 10)), wake.signal);
        continue;
      }
      if (!claimed) {
        idleSince ??= askedAt;
        if (options.stopWhenIdleMs !== undefined && now() - idleSince >= options.stopWhenIdleMs) {
          stop("idle");
          break;
        }
        // After a server-side wait, ask again at once; polling backs off.
        const delayMs = waitSeconds > 0 ? 0 : backoffDelay(polling, Math.min(emptyPolls++, 10));
        emit({ type: "idle", delayMs });
        if (delayMs > 0) await sleep(delayMs, wake.signal);
        continue;
      }
      emptyPolls = 0;
      idleSince = null;
      summary.claimed++;
      emit({ type: "claimed", workItem: claimed.claim.workItem, lease: claimed.claim.lease, attempts: claimed.attempts });
      const { claim, grantedAt } = claimed;
      let next = await work(claim.workItem, { lease: claim.lease, grantedAt }, claim.attention);
      while (next) {
        const held: ObtainedLease = next;
        summary.claimed++;
        let child: WorkItem;
        try {
          child = await retryUnanswered(() => options.client.workItems.get.query({ id: held.lease.workItemId }), settings.retry);
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
