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
export interface Caller {
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
}
