import type { Db } from "../db";
import type { Routing } from "../domain/routing";
import { logger } from "../log";
import { AttentionWaiters } from "./attention-waiters";
import { ClaimWaiters } from "./claim-waiters";
import { EventReaders } from "./event-readers";
import { CommitListener, type Heard } from "./listener";
import { RELAYED } from "../sql/notifications";

/**
 * Waiting instead of polling (API.md v2). One CommitListener per app instance (server/instance.ts) hears
 * every committed event, whichever instance wrote it, and fans out to in-memory waiters of
 * three kinds, all built on one waiting primitive (./waiting.ts: a closure and a timer, no
 * database connection and no lock while it waits):
 *
 * - claim waiters (./claim-waiters.ts), woken by commits that may have made work claimable
 *   and by lease expiry (the sweep's commit wakes other instances);
 * - attention waiters (./attention-waiters.ts), woken by `attention.resolved`;
 * - event-stream readers (./event-readers.ts), woken by every commit.
 */

const ATTENTION_RESOLVED = "attention.resolved";
/** What a quiet commit of this instance is, heard here (server/instance.ts): as the relay announces it to the others. */
const QUIET_COMMIT: Heard = { types: new Set([RELAYED]) };

export class Wakeups {
  private readonly listener: CommitListener;
  private readonly claims: ClaimWaiters;
  private readonly attention: AttentionWaiters;
  private readonly events = new EventReaders();
  private closed = false;

  constructor(
    db: Db,
    connectionString: string,
    onError: (error: unknown) => void = (error) => logger().error({ err: error }, "wake-up failed"),
  ) {
    this.claims = new ClaimWaiters(db, onError);
    this.attention = new AttentionWaiters(db, onError);
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
    return this.claims.size;
  }

  get waitingForAttention(): number {
    return this.attention.count;
  }

  /** This instance committed events that the database did not announce and that made nothing claimable. */
  heardQuietCommitHere() {
    if (!this.closed) this.heard(QUIET_COMMIT);
  }

  private heard(heard: Heard) {
    const types = heard === "unknown" ? null : heard.types;
    this.events.commit();
    // Only commits that made nothing claimable are RELAYED (the database does not announce them: migrations 20261203170000, 20261206000000).
    this.claims.heard(types === null || [...types].some((type) => type !== RELAYED));
    if (this.attention.any && (types === null || types.has(ATTENTION_RESOLVED))) this.attention.poke();
  }

  /** ClaimWaiters.claimWhenReady, once LISTEN is in place. */
  async claimWhenReady<T>(
    group: string, waitMs: number, attempt: () => Promise<T | null>, signal?: AbortSignal, routing?: Routing,
  ): Promise<T | null> {
    await this.ready();
    return this.claims.claimWhenReady(group, waitMs, attempt, signal, routing);
  }

  /** Resolves when attention request `id` is resolved, the time is up, or `signal` aborts. */
  async attentionResolved(id: string, waitMs: number, signal?: AbortSignal): Promise<void> {
    await this.ready();
    if (signal?.aborted || this.closed) return;
    await this.attention.resolved(id, waitMs, signal);
  }

  /** A token for eventsSince: read it before reading the events table. */
  get eventsHeard(): number {
    return this.events.heard;
  }

  /** Resolves once a commit was heard after `generation` was taken, after `waitMs`, or on abort. */
  async eventsSince(generation: number, waitMs: number, signal?: AbortSignal): Promise<void> {
    if (this.closed) return;
    await this.events.since(generation, waitMs, signal);
  }

  /** Stops listening; everything still waiting returns as if its time were up. */
  async close(): Promise<void> {
    this.closed = true;
    this.claims.close();
    this.attention.close();
    this.events.close();
    await this.listener.close();
  }
}
