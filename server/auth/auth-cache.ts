import type { Caller } from "../domain/types";

/** Recently authenticated tokens of one instance (server/auth/tokens.ts authenticate), kept by its client's Executor (server/db.ts). */
export function createAuthCache() {
  return {
    callers: new Map<string, { caller: Caller; until: number; generation: number }>(),
    /** Bumped by every revocation through this instance: older cache entries no longer count. */
    revocations: 0,
  };
}

export type AuthCache = ReturnType<typeof createAuthCache>;
