/** The server holds a waiting request at most this long (API.md: waitSeconds / timeoutSeconds ≤ 60); longer waits are several requests. */
export const SERVER_WAIT_LIMIT_SECONDS = 60;

/**
 * Waits on the server for up to `totalSeconds`, as the CLI and the MCP server do for a claim and
 * for an answer: calls `once(seconds)` with server-side waits of at most 60 s until it returns
 * something other than null, the time is up, or `signal` aborts. Nothing polls in between.
 */
export async function waitInSteps<T>(totalSeconds: number, once: (seconds: number) => Promise<T | null>, signal?: AbortSignal): Promise<T | null> {
  const deadline = Date.now() + totalSeconds * 1000;
  for (;;) {
    const left = Math.max(0, (deadline - Date.now()) / 1000);
    const result = await once(Math.min(left, SERVER_WAIT_LIMIT_SECONDS));
    if (result !== null || left <= SERVER_WAIT_LIMIT_SECONDS || signal?.aborted) return result;
  }
}
