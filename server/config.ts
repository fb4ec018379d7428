/** Runtime settings read from the environment (documented in README "Configuration"). */

export function continuitySeconds(): number {
  const raw = process.env.WORK_GRAPH_CONTINUITY_SECONDS;
  const value = raw === undefined || raw === "" ? 600 : Number(raw);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

export function sweepIntervalMs(): number {
  const value = Number(process.env.WORK_GRAPH_SWEEP_INTERVAL_MS ?? 1000);
  return Number.isFinite(value) && value >= 50 ? value : 1000;
}

/** How long an idempotency receipt is kept; a replay after that is a new call. */
export function idempotencyHours(): number {
  const raw = process.env.WORK_GRAPH_IDEMPOTENCY_HOURS;
  const value = raw === undefined || raw === "" ? 24 : Number(raw);
  return Number.isFinite(value) && value > 0 ? value : 24;
}

/** Rule 11: the consecutive expiries after which an item goes to a person (0 = off). */
export function maxConsecutiveExpiries(): number {
  const raw = process.env.WORK_GRAPH_MAX_EXPIRIES;
  const value = raw === undefined || raw === "" ? 3 : Number(raw);
  return Number.isInteger(value) && value > 0 ? value : 0;
}

/** Base of the dashboard links in webhook bodies. */
export function publicUrl(): string {
  const value = process.env.WORK_GRAPH_PUBLIC_URL || `http://localhost:${process.env.PORT ?? 3000}`;
  return value.replace(/\/+$/, "");
}
