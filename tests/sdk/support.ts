/** Helpers for SDK tests: a fetch that records (and can tamper with) every API request. */

export interface RecordedRequest {
  /** Procedure path, e.g. "leases.renew". */
  path: string;
  /** Parsed input (POST body, or the `input` query parameter of a GET). */
  input: Record<string, unknown> | null;
  /** Set when the response came back: the HTTP status and error reason, if any. */
  status?: number;
  reason?: string;
}

export interface FetchHooks {
  /** Runs before the request is sent; may wait (a slow network). */
  before?: (request: RecordedRequest) => Promise<void> | void;
  /** Return true to drop the response after the server handled the request (a lost answer). */
  dropResponse?: (request: RecordedRequest) => boolean;
}

export function recordingFetch(log: RecordedRequest[], hooks: FetchHooks = {}): typeof fetch {
  return async (input, init) => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    const path = url.pathname.replace(/^\/api\/trpc\//, "");
    const raw = init?.body ? String(init.body) : url.searchParams.get("input");
    const request: RecordedRequest = { path, input: raw ? (JSON.parse(raw) as Record<string, unknown>) : null };
    log.push(request);
    await hooks.before?.(request);
    const response = await fetch(input, init);
    const text = await response.text();
    request.status = response.status;
    if (!response.ok) request.reason = (JSON.parse(text) as { error?: { data?: { reason?: string } } }).error?.data?.reason;
    if (hooks.dropResponse?.(request)) throw new TypeError("fetch failed (simulated: the response was lost)");
    return new Response(text, { status: response.status, headers: response.headers });
  };
}

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise with its resolve function, for gates between test steps. */
export function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}
