import type { Db } from "../db";
import { resolvedAttentionIds } from "../sql/attention";
import { wait, type Waiting } from "./waiting";

/** Waiters for the resolution of attention requests (attention.wait), woken by commits of `attention.resolved`. */
export class AttentionWaiters {
  private readonly waiters = new Map<string, Set<Waiting<void>>>();
  private running = false;
  private again = false;

  constructor(
    private readonly db: Db,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** How many waits are in progress, over all requests. */
  get count(): number {
    let count = 0;
    for (const waiters of this.waiters.values()) count += waiters.size;
    return count;
  }

  get any(): boolean {
    return this.waiters.size > 0;
  }

  /** Resolves when attention request `id` is resolved, the time is up, or `signal` aborts. */
  resolved(id: string, waitMs: number, signal?: AbortSignal): Promise<void> {
    return wait<void>({
      waitMs,
      signal,
      timeUpValue: undefined,
      enlist: (waiting) => {
        const waiters = this.waiters.get(id) ?? new Set();
        waiters.add(waiting);
        this.waiters.set(id, waiters);
        // It may have been resolved before LISTEN heard about it: look once now that we are registered.
        this.poke();
        return () => {
          waiters.delete(waiting);
          if (waiters.size === 0 && this.waiters.get(id) === waiters) this.waiters.delete(id);
        };
      },
    });
  }

  /** Some request may have been resolved: look which of the awaited ones are. */
  poke() {
    this.again = true;
    if (!this.running) void this.run();
  }

  private async run() {
    this.running = true;
    try {
      while (this.again && this.waiters.size > 0) {
        this.again = false;
        let resolved: { id: string }[] = [];
        try {
          resolved = await resolvedAttentionIds(this.db, [...this.waiters.keys()]);
        } catch (error) {
          this.onError(error);
        }
        for (const { id } of resolved) for (const waiting of [...(this.waiters.get(id) ?? [])]) waiting.settle({ value: undefined });
      }
    } finally {
      this.running = false;
    }
  }

  /** Every wait returns. */
  close() {
    for (const waiters of [...this.waiters.values()]) for (const waiting of [...waiters]) waiting.settle({ value: undefined });
  }
}
