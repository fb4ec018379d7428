import type { ErrorReason } from "../sdk/errors";

/** Exit codes of `work-graph`, by error reason (documented in `work-graph help` and docs/agents.md). */
export const EXIT = {
  OK: 0,
  /** A bug or an answer the CLI did not expect. */
  UNEXPECTED: 1,
  /** Bad command line, or the server refused the input (VALIDATION). Fix the call; do not retry as is. */
  USAGE: 2,
  /** UNAUTHENTICATED or FORBIDDEN: wrong, revoked or under-privileged token. */
  AUTH: 3,
  /** NOT_FOUND: no such work item, lease, attention request or token. */
  NOT_FOUND: 4,
  /** LEASE_NOT_CURRENT (or no live lease known for the item): fenced — stop working on the item. */
  FENCED: 5,
  /** NOT_CLAIMABLE or LIMIT_REACHED, or `claim` found nothing ready. */
  NOT_CLAIMABLE: 6,
  /** Any other conflict: ALREADY_TERMINAL, ITEM_LEASED, DEPENDENCY_CYCLE, DUPLICATE, ALREADY_RESOLVED, IDEMPOTENCY_KEY_REUSED. */
  CONFLICT: 7,
  /** NETWORK, UNAVAILABLE or INTERNAL: the server could not be reached or failed. Retrying later is reasonable. */
  UNAVAILABLE: 8,
  /** WORKER_DRAINED: an operator drained this worker; finish what you hold, claim nothing new. */
  DRAINED: 9,
  /** `attention wait`: the time ran out and the request is still unanswered. */
  WAIT_TIMEOUT: 10,
} as const;

export function exitCodeFor(reason: ErrorReason): number {
  switch (reason) {
    case "VALIDATION":
      return EXIT.USAGE;
    case "UNAUTHENTICATED":
    case "FORBIDDEN":
      return EXIT.AUTH;
    case "NOT_FOUND":
      return EXIT.NOT_FOUND;
    case "LEASE_NOT_CURRENT":
      return EXIT.FENCED;
    case "NOT_CLAIMABLE":
    case "LIMIT_REACHED":
      return EXIT.NOT_CLAIMABLE;
    case "ALREADY_TERMINAL":
    case "ITEM_LEASED":
    case "DEPENDENCY_CYCLE":
    case "DUPLICATE":
    case "ALREADY_RESOLVED":
    case "IDEMPOTENCY_KEY_REUSED":
      return EXIT.CONFLICT;
    case "TOO_LARGE":
      return EXIT.USAGE;
    case "WORKER_DRAINED":
      return EXIT.DRAINED;
    case "NETWORK":
    case "UNAVAILABLE":
    case "INTERNAL":
      return EXIT.UNAVAILABLE;
    case "ABORTED":
      return EXIT.UNEXPECTED;
  }
}

export const EXIT_CODE_TABLE = `Exit codes:
  0  ok
  1  unexpected error
  2  usage error, VALIDATION or TOO_LARGE (the input is wrong: fix it, do not retry as is)
  3  UNAUTHENTICATED / FORBIDDEN (token missing, unknown, revoked, or not allowed)
  4  NOT_FOUND
  5  LEASE_NOT_CURRENT: your lease is gone (expired, taken over, revoked, ended) - stop working on the item
  6  NOT_CLAIMABLE or LIMIT_REACHED (the item is not ready for you, or its concurrency key is full),
     or claim found nothing ready
  7  other conflict (ALREADY_TERMINAL, ITEM_LEASED, DEPENDENCY_CYCLE, DUPLICATE, ALREADY_RESOLVED,
     IDEMPOTENCY_KEY_REUSED)
  8  server unreachable or failing (NETWORK / UNAVAILABLE / INTERNAL): retry later
  9  WORKER_DRAINED: an operator drained this worker - finish what you hold, claim nothing new
  10 attention wait: still unanswered when --timeout ran out`;
