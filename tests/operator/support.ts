import type pg from "pg";

/** Waits (polling pg_locks, never a fixed sleep) until at least `count` lock requests of `locktype` are waiting. */
export async function waitForWaiters(sql: pg.Client, locktype: "advisory" | "tuple" | "transactionid" | "relation", count: number) {
  for (;;) {
    const { rows } = await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = $1 AND NOT l.granted AND a.datname = current_database()`,
      [locktype],
    );
    if (rows[0]!.n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits until `count` backends of this database wait on a heavyweight lock (any kind). */
export async function waitForLockWaits(sql: pg.Client, count: number) {
  for (;;) {
    const { rows } = await sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if (rows[0]!.n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Settles a promise into { ok, value } or { ok: false, reason, detail } (a WorkGraphError's). */
export async function settle<T>(promise: Promise<T>) {
  try {
    return { ok: true as const, value: await promise };
  } catch (error) {
    const cause = (error as { cause?: { reason?: string; detail?: Record<string, unknown> } }).cause;
    if (!cause?.reason) throw error;
    return { ok: false as const, reason: cause.reason, detail: cause.detail ?? {} };
  }
}
