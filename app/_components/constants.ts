/**
 * Header every dashboard request sends; the server requires it on cookie-authenticated
 * mutations (server/trpc/init.ts CSRF_HEADER — repeated here so no server module reaches
 * the browser bundle).
 */
export const CSRF_HEADER = "x-work-graph-csrf";

/** How often every dashboard query polls (see app/README-dashboard.md for polling vs SSE). */
export const POLL_MS = 1_000;
