/** Fallback poll of every dashboard query; changes arrive through events.stream (docs/dashboard.md "Live updates"). */
export const POLL_MS = 15_000;
