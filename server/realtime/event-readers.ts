import { wait, type Waiting } from "./waiting";

/** Event-stream readers waiting for the next commit (events.stream between pages). */
export class EventReaders {
  private generation = 0;
  private readonly waiters = new Set<Waiting<void>>();

  /** A token for since(): read it before reading the events table. */
  get heard(): number {
    return this.generation;
  }

  /** A commit was heard: every reader waiting reads again. */
  commit() {
    this.generation++;
    for (const waiting of [...this.waiters]) waiting.settle({ value: undefined });
  }

  /** Resolves once a commit was heard after `generation` was taken, after `waitMs`, or on abort. */
  async since(generation: number, waitMs: number, signal?: AbortSignal): Promise<void> {
    if (this.generation !== generation || signal?.aborted) return;
    await wait<void>({
      waitMs,
      signal,
      timeUpValue: undefined,
      enlist: (waiting) => {
        this.waiters.add(waiting);
        return () => this.waiters.delete(waiting);
      },
    });
  }

  /** Every reader waiting returns. */
  close() {
    for (const waiting of [...this.waiters]) waiting.settle({ value: undefined });
  }
}
