import type { Db } from "../db";
import { logger } from "../log";

/** The client handed to an interactive transaction's callback. */
export type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

// PostgreSQL codes worth one more try: the whole transaction is replayed from the start.
const RETRYABLE_SQLSTATES = new Set(["40P01" /* deadlock_detected */, "40001" /* serialization_failure */]);

export function sqlState(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current && depth < 6; depth++) {
    const candidate = current as { code?: unknown; meta?: { code?: unknown; driverAdapterError?: { cause?: { originalCode?: unknown } } }; cause?: unknown };
    const original = candidate.meta?.driverAdapterError?.cause?.originalCode;
    if (typeof original === "string" && /^[0-9A-Z]{5}$/.test(original)) return original;
    if (typeof candidate.meta?.code === "string" && /^[0-9A-Z]{5}$/.test(candidate.meta.code)) return candidate.meta.code;
    if (typeof candidate.code === "string" && /^[0-9A-Z]{5}$/.test(candidate.code)) return candidate.code;
    current = candidate.cause;
  }
  return undefined;
}

/** Retries since the process started, by SQLSTATE (tests assert that lock order leaves none). */
const retries = new Map<string, number>();
export const transactionRetries = (): Record<string, number> => Object.fromEntries(retries);

/**
 * Runs `effect` after `tx` commits, exactly once: never for a rolled-back or replayed attempt.
 * Given the client itself (an autocommit statement, which has committed when it returns) or
 * any transaction outside inTransaction (no effects list), it runs at once.
 */
export function afterCommit(tx: Tx | Db, effect: () => void): void {
  const effects = tx.$executor().commitEffects.get(tx);
  if (effects) effects.push(effect);
  else effect();
}

/**
 * Whether a commit is one the database does not announce and that made nothing claimable (a
 * claim, a renewal, a note, a release that readied nothing): after it, the instance's
 * event-stream readers hear of it at once and the relay tells other instances
 * (the hook server/instance.ts sets: its wake-ups and relay).
 */
export type QuietCommit<T> = (result: T) => boolean;

/**
 * Runs `attempt` again, whole, when PostgreSQL aborted it with a deadlock or serialization
 * failure (up to 8 times). Operations take row locks in one global order (by id), so that
 * should not happen: every replay is logged with its SQLSTATE, so an ordering defect shows up
 * instead of costing a silent second. Once an attempt committed, the quiet-commit announcement
 * of `db` when `quiet` says so.
 */
async function retrying<T>(attempt: () => Promise<T>, db?: Db, quiet?: QuietCommit<T>): Promise<T> {
  for (let round = 1; ; round++) {
    try {
      const result = await attempt();
      if (quiet?.(result)) db!.$executor().onQuietCommit();
      return result;
    } catch (error) {
      const state = sqlState(error);
      if (round >= 8 || !state || !RETRYABLE_SQLSTATES.has(state)) throw error;
      retries.set(state, (retries.get(state) ?? 0) + 1);
      logger().warn({ round, sqlState: state, cause: state === "40P01" ? "deadlock detected" : "serialization failure" }, "transaction retry");
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * round));
    }
  }
}

/** `attempt` replayed on conflicts (see retrying), announcing nothing. */
export const retryingConflicts = <T>(attempt: () => Promise<T>): Promise<T> => retrying(attempt);

/**
 * Runs `work` as one interactive transaction (READ COMMITTED), replayed on conflicts
 * (retryingConflicts); then its after-commit effects, and the quiet-commit announcement when
 * `quiet` says so.
 */
export async function inTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>, quiet?: QuietCommit<T>): Promise<T> {
  const executor = db.$executor();
  return retrying(async () => {
    const effects: (() => void)[] = [];
    let open: Tx | undefined;
    try {
      const committed = await db.$transaction((tx) => (executor.commitEffects.set((open = tx), effects), work(tx)), { maxWait: 15_000, timeout: 60_000 });
      for (const effect of effects) effect();
      return committed;
    } finally {
      if (open) executor.commitEffects.delete(open);
    }
  }, db, quiet);
}

/** One autocommit statement (`statement`), replayed on conflicts; after it, the quiet-commit announcement when `quiet` says so. */
export const autocommit = <T>(db: Db, statement: () => Promise<T>, quiet: QuietCommit<T>): Promise<T> => retrying(statement, db, quiet);
