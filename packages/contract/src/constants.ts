/*
 * The names docs/api.md defines once for every side: the stages of a work item, the outcomes
 * a lease ends with, the error reasons, attention kinds, roles, LEASE_NOT_CURRENT's kinds, the
 * event types, the dashboard's CSRF header and the path of an item's page. The server (schemas,
 * errors, SQL), the dashboard, the CLI and MCP server use these lists, and the agent SDK
 * re-exports them. tests/docs/api-contract.test.ts checks the stages and reasons against docs/api.md.
 */

/** Every stage of a work item, in the order docs/api.md's WorkItem shape lists them. */
export const STAGES = [
  "ready", "leased", "blocked", "waiting_on_children", "needs_attention", "released", "cancelled", "scheduled",
] as const;
export type Stage = (typeof STAGES)[number];

/** The stages an item never leaves; a released or cancelled blocker satisfies a dependency. */
export const TERMINAL_STAGES = ["released", "cancelled"] as const satisfies readonly Stage[];
export type TerminalStage = (typeof TERMINAL_STAGES)[number];

/** The stages of an open item that is not ready: what stands in its way. */
export type WaitingStage = Exclude<Stage, "ready" | TerminalStage>;

export function isTerminalStage(stage: string): stage is TerminalStage {
  return (TERMINAL_STAGES as readonly string[]).includes(stage);
}

/** How a lease ends: exactly one of these (docs/api.md; operator control adds "revoked", hand-back "returned"). */
export const LEASE_OUTCOMES = [
  "released", "cancelled", "decomposed", "attention_requested", "expired", "revoked", "returned",
] as const;
export type LeaseOutcome = (typeof LEASE_OUTCOMES)[number];

/** Every `error.data.reason` of docs/api.md ("Errors"), in its order. */
export const REASONS = [
  "VALIDATION", "UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "LEASE_NOT_CURRENT", "NOT_CLAIMABLE", "ALREADY_TERMINAL",
  "ITEM_LEASED", "DEPENDENCY_CYCLE", "DUPLICATE", "ALREADY_RESOLVED", "IDEMPOTENCY_KEY_REUSED", "WORKER_DRAINED",
  "TOO_LARGE", "UNAVAILABLE", "INTERNAL", "LIMIT_REACHED",
] as const;
export type Reason = (typeof REASONS)[number];

/** What an attention request asks a person for (docs/api.md "AttentionRequest"). */
export const ATTENTION_KINDS = ["decision", "authority", "access", "review", "help", "scope"] as const;
export type AttentionKind = (typeof ATTENTION_KINDS)[number];

/**
 * The format of a capability, a `requires` entry and a concurrency key (docs/api.md "Queue policy").
 */
export const CAPABILITY_PATTERN = /^[a-z0-9][a-z0-9:._/-]{0,63}$/;

/** The format of a project id; "default" always exists (docs/api.md "Queue policy"). */
export const PROJECT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,49}$/;
export const DEFAULT_PROJECT = "default";

/** The format of a new work item's id (docs/api.md). */
export const WORK_ITEM_ID = /^[a-z0-9][a-z0-9._-]{0,99}$/;

/** A token's role (docs/api.md, the "role" column of "Procedures"; admin may do everything). */
/** Webhook body formats an admin may create; the integrations' own webhooks (`slack_app`, `github`) are made by the server. */
export const WEBHOOK_FORMATS = ["json", "slack"] as const;
export const OWNED_WEBHOOK_FORMATS = ["slack_app", "github"] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number] | (typeof OWNED_WEBHOOK_FORMATS)[number];

export const ROLES = ["agent", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** `error.data.detail.kind` of LEASE_NOT_CURRENT: why a presented lease is not the item's live one. */
export const LEASE_NOT_CURRENT_KINDS = ["expired", "superseded", "revoked", "ended", "unknown"] as const;
export type LeaseNotCurrentKind = (typeof LEASE_NOT_CURRENT_KINDS)[number];

/** Header a cookie-authenticated (dashboard) mutation must carry with the value "1"; a cross-site page cannot add it. */
export const CSRF_HEADER = "x-work-graph-csrf";

/** The dashboard page of a work item, relative to the dashboard's root (webhook bodies prefix WORK_GRAPH_PUBLIC_URL). */
export function itemHref(workItemId: string): string {
  return `/items/${encodeURIComponent(workItemId)}`;
}

/** Every `type` an Event (docs/api.md's Event shape) is recorded with. */
export const EVENT_TYPES = [
  "work_item.created", "work_item.updated", "work_item.moved", "work_item.priority_changed", "work_item.status_changed",
  "dependency.added", "dependency.removed", "lease.claimed", "lease.renewed", "lease.ended", "note.added",
  "attention.requested", "attention.resolved", "github.unlabeled",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
