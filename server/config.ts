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

/** Base of the dashboard links in webhook bodies. */
export function publicUrl(): string {
  const value = process.env.WORK_GRAPH_PUBLIC_URL || `http://localhost:${process.env.PORT ?? 3000}`;
  return value.replace(/\/+$/, "");
}
