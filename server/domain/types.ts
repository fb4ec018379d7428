import type { AttentionKind, LeaseOutcome, Role, Stage } from "./contract";

export { LEASE_OUTCOMES, STAGES, type AttentionKind, type LeaseOutcome, type Role, type Stage } from "./contract";

export interface Lease {
  id: string;
  workItemId: string;
  workerId: string;
  epoch: number;
  acquiredAt: string;
  expiresAt: string;
  renewedAt: string | null;
  endedAt: string | null;
  outcome: LeaseOutcome | null;
}

export interface WorkItem {
  id: string;
  title: string;
  description: string | null;
  parentId: string | null;
  status: "open" | "released" | "cancelled";
  stage: Stage;
  priority: number;
  dependsOn: string[];
  openChildCount: number;
  currentLease: Lease | null;
  previousWorkerId: string | null;
  projectId: string;
  requires: string[];
  concurrencyKey: string | null;
  notBefore: string | null;
  externalId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AttentionRequest {
  id: string;
  workItemId: string;
  leaseId: string;
  workerId: string;
  kind: AttentionKind;
  question: string;
  context: string | null;
  options: string[];
  blocking: boolean;
  status: "open" | "resolved";
  resolution: string | null;
  resolvedBy: string | null;
  /** The name of the person who answered; null when a token (or nobody yet) did. */
  resolvedByName: string | null;
  createdAt: string;
  resolvedAt: string | null;
}

export interface Note {
  id: string;
  workItemId: string;
  leaseId: string;
  epoch: number;
  workerId: string;
  content: string;
  createdAt: string;
}

export interface WorkGraphEvent {
  sequence: number;
  workItemId: string;
  type: string;
  actor: string;
  /** The name of the person `actor` stands for (person:…); null for tokens and agents. */
  actorName: string | null;
  leaseId: string | null;
  epoch: number | null;
  data: Record<string, unknown>;
  createdAt: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Who is calling, as established from the bearer token. */
/** The person behind a signed-in session or a personal token. */
export interface CallerPerson {
  id: string;
  /** Their name, else their email, else their subject: what the dashboard shows. */
  name: string;
}

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
