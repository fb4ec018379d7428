import { CAPABILITY_PATTERN } from "./constants";
import type { ImportItemInput } from "./inputs";

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

/** An item of workItems.import (docs/api.md "Import") made from an issue: always with its externalId. */
export type GithubImportItem = ImportItemInput & { externalId: string };

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
