import type { Role } from "@work-graph/contract";

/** The person behind a signed-in session or a personal token. */
export interface CallerPerson {
  id: string;
  /** Their name, else their email, else their subject: what the dashboard shows. */
  name: string;
}

/** Who is calling, as established from the bearer token. */
export interface Caller {
  /** The token's id; for a person's sign-in session (no token) `person-session:<person id>` (idempotency receipts are scoped by it). */
  tokenId: string;
  role: Role;
  /** Bound worker id of an agent token; null for operators and admins. */
  workerId: string | null;
  /** Name recorded as the actor of events this caller causes. */
  actor: string;
  /** Rule 12 (projects scope tokens): the projects this token may see; empty = every project. */
  projects: string[];
  /** Rule 13: an agent token's capabilities (what its claims may take by default); empty otherwise. */
  capabilities: string[];
  /** The signed-in person (a sign-in session or their personal token); absent or null for other tokens. */
  person?: CallerPerson | null;
  /** The name an outside identity gave itself (e.g. a chat user's profile name, set by an integration) when no person stands behind the caller. */
  displayName?: string | null;
}
