/**
 * Header every dashboard request sends; the server requires it on cookie-authenticated
 * mutations (server/trpc/init.ts CSRF_HEADER — repeated here so no server module reaches
 * the browser bundle).
 */
export const CSRF_HEADER = "x-work-graph-csrf";

/** Fallback poll of every dashboard query; changes arrive through events.stream (docs/dashboard.md "Live updates"). */
export const POLL_MS = 15_000;
