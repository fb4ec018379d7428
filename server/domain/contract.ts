/*
 * The names docs/api.md defines once for every side: the stages of a work item, the outcomes
 * a lease ends with, the error reasons, attention kinds, roles, LEASE_NOT_CURRENT's kinds, the
 * dashboard's CSRF header and the path of an item's page. The server (schemas, errors, SQL), the dashboard,
 * the CLI and MCP server use these lists, and the agent SDK re-exports them. A plain constant
 * module: it imports nothing, so the SDK bundle and browser code can take it without any server
 * runtime. tests/docs/api-contract.test.ts checks the stages and reasons against docs/api.md.
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

/** A token's role (docs/api.md, the "role" column of "Procedures"; admin may do everything). */
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

/*
 * GitHub issues (docs/github.md): how an issue maps to a work item, for the server's webhook and
 * the CLI's `work-graph github import` alike.
 */

/** An issue as GitHub's webhook payloads and REST API both give it (the fields read here). */
export interface GithubIssue {
  number: number;
  title: string;
  body?: string | null;
  labels: { name: string }[];
}

/** An item of workItems.import (docs/api.md "Import") made from an issue. */
export interface GithubImportItem {
  ref: string;
  title: string;
  description?: string | null;
  parent?: string;
  dependsOn?: string[];
  requires?: string[];
  externalId: string;
}

const GITHUB_MAX_TITLE = 500;
const GITHUB_MAX_DESCRIPTION = 50_000;
/** Most task-list children taken from one issue body, and most `depends on` references. */
export const GITHUB_MAX_TASKS = 100;

const clipText = (text: string, max: number) => (text.length > max ? text.slice(0, max) : text);
// Text GitHub accepts but PostgreSQL text cannot hold.
const storable = (text: string) => text.replaceAll("\u0000", "");

export const githubIssueExternalId = (repository: string, issueNumber: number) => `github:${repository}#${issueNumber}`;

/** `github:owner/repo#12` → the repository and the issue number (null for another external id). */
export function parseGithubIssueExternalId(externalId: string | null): { repository: string; issueNumber: number } | null {
  const match = /^github:([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)#(\d+)$/.exec(externalId ?? "");
  return match ? { repository: match[1]!, issueNumber: Number(match[2]) } : null;
}

/** Capabilities from the issue's `requires:<capability>` labels (others, and invalid ones, are ignored). */
export function githubRequires(labels: { name: string }[]): string[] {
  const capabilities = labels
    .map((entry) => /^requires:(.+)$/.exec(entry.name.trim())?.[1]?.trim().toLowerCase())
    .filter((capability): capability is string => capability !== undefined && CAPABILITY_PATTERN.test(capability));
  return [...new Set(capabilities)].sort().slice(0, 16);
}

/** The item's own fields from the issue: title, body as description, `requires:` labels. */
export function githubIssueFields(issue: GithubIssue): { title: string; description: string | null; requires: string[] } {
  const title = clipText(storable(issue.title).trim(), GITHUB_MAX_TITLE) || `Issue #${issue.number}`;
  const body = storable(issue.body ?? "").trim();
  return { title, description: body === "" ? null : clipText(body, GITHUB_MAX_DESCRIPTION), requires: githubRequires(issue.labels) };
}

/** The open (`- [ ] …`) entries of the body's task list, in order, unique, at most GITHUB_MAX_TASKS. */
export function githubOpenTasks(body: string | null | undefined): string[] {
  const tasks = (body ?? "")
    .split(/\r?\n/)
    .map((line) => /^\s*[-*+]\s+\[ \]\s+(.+?)\s*$/.exec(line)?.[1])
    .filter((task): task is string => task !== undefined && task.trim() !== "")
    .map((task) => clipText(storable(task), GITHUB_MAX_TITLE));
  return [...new Set(tasks)].slice(0, GITHUB_MAX_TASKS);
}

/** Issue numbers the body names with `depends on #N` or `blocked by #N` (any case, also `depends on: #1, #2`). */
export function githubBlockerNumbers(body: string | null | undefined, own: number): number[] {
  const numbers = new Set<number>();
  for (const phrase of (body ?? "").matchAll(/\b(?:depends\s+on|blocked\s+by)\s*:?\s*((?:#\d+(?:\s*(?:,|and)\s*)?)+)/gi)) {
    for (const reference of phrase[1]!.matchAll(/#(\d+)/g)) numbers.add(Number(reference[1]));
  }
  numbers.delete(own);
  return [...numbers].slice(0, GITHUB_MAX_TASKS);
}

/** The externalId of task-list entry `task` of issue `issueExternalId`: re-imports find it. */
export const githubTaskExternalId = (issueExternalId: string, task: string) => clipText(`${issueExternalId}/task:${task}`, 200);

/** An issue as import items: the item (ref `#N`, depending on `dependsOn`: refs or ids), then its task-list children. */
export function githubIssueImport(repository: string, issue: GithubIssue, dependsOn: string[]): GithubImportItem[] {
  const externalId = githubIssueExternalId(repository, issue.number);
  const ref = `#${issue.number}`;
  const root: GithubImportItem = { ref, externalId, ...githubIssueFields(issue), dependsOn };
  const tasks = githubOpenTasks(issue.body).map((task, index) => ({ ref: `${ref}/${index + 1}`, parent: ref, title: task, externalId: githubTaskExternalId(externalId, task) }));
  return [root, ...tasks];
}
