import { z } from "zod";
import { CAPABILITY_PATTERN } from "../domain/contract";
import type { ImportItem } from "../domain/import-plan";

/*
 * GitHub issues in (docs/github.md): what an `issues` webhook payload says about its work item.
 * Pure: the payload's fields the bridge reads, the item they map to, the task list that becomes
 * children and the `depends on #N` / `blocked by #N` references.
 */

const label = z.object({ name: z.string() });

/** The parts of an `issues` event payload the bridge reads (GitHub sends much more). */
export const issuesPayload = z.object({
  action: z.string(),
  issue: z.object({
    number: z.number().int().positive(),
    title: z.string(),
    body: z.string().nullish(),
    labels: z.array(label).default([]),
    html_url: z.string().optional(),
  }),
  label: label.optional(),
  repository: z.object({ full_name: z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/) }),
  sender: z.object({ login: z.string() }).optional(),
});

export type IssuesPayload = z.infer<typeof issuesPayload>;

/** Longest title and description an item takes (the API's limits). */
const MAX_TITLE = 500;
const MAX_DESCRIPTION = 50_000;
/** Most task-list children taken from one issue body. */
export const MAX_TASKS = 100;

export const issueExternalId = (repository: string, issueNumber: number) => `github:${repository}#${issueNumber}`;

/** `github:owner/repo#12` → the repository and the issue number (null for another external id). */
export function parseIssueExternalId(externalId: string | null): { repository: string; issueNumber: number } | null {
  const match = /^github:([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)#(\d+)$/.exec(externalId ?? "");
  return match ? { repository: match[1]!, issueNumber: Number(match[2]) } : null;
}

const clip = (text: string, max: number) => (text.length > max ? text.slice(0, max) : text);
// Text GitHub accepts but PostgreSQL text cannot hold.
const storable = (text: string) => text.replaceAll("\u0000", "");

/** Capabilities from the issue's `requires:<capability>` labels (others, and invalid ones, are ignored). */
export function requiresOf(labels: { name: string }[]): string[] {
  const capabilities = labels
    .map((entry) => /^requires:(.+)$/.exec(entry.name.trim())?.[1]?.trim().toLowerCase())
    .filter((capability): capability is string => capability !== undefined && CAPABILITY_PATTERN.test(capability));
  return [...new Set(capabilities)].sort().slice(0, 16);
}

export const hasLabel = (labels: { name: string }[], wanted: string) => labels.some((entry) => entry.name.toLowerCase() === wanted.toLowerCase());

/** The item's own fields from the issue. */
export function itemFields(payload: IssuesPayload): { title: string; description: string | null; requires: string[] } {
  const title = clip(storable(payload.issue.title).trim(), MAX_TITLE) || `Issue #${payload.issue.number}`;
  const body = storable(payload.issue.body ?? "").trim();
  return { title, description: body === "" ? null : clip(body, MAX_DESCRIPTION), requires: requiresOf(payload.issue.labels) };
}

/** The open (`- [ ] …`) entries of the body's task list, in order, unique, at most MAX_TASKS. */
export function openTasks(body: string | null | undefined): string[] {
  const tasks = (body ?? "")
    .split(/\r?\n/)
    .map((line) => /^\s*[-*+]\s+\[ \]\s+(.+?)\s*$/.exec(line)?.[1])
    .filter((task): task is string => task !== undefined && task.trim() !== "")
    .map((task) => clip(storable(task), MAX_TITLE));
  return [...new Set(tasks)].slice(0, MAX_TASKS);
}

/** Issue numbers this one names with `depends on #N` or `blocked by #N` (any case, also `depends on: #1, #2`). */
export function blockerNumbers(body: string | null | undefined, own: number): number[] {
  const numbers = new Set<number>();
  for (const phrase of (body ?? "").matchAll(/\b(?:depends\s+on|blocked\s+by)\s*:?\s*((?:#\d+(?:\s*(?:,|and)\s*)?)+)/gi)) {
    for (const reference of phrase[1]!.matchAll(/#(\d+)/g)) numbers.add(Number(reference[1]));
  }
  numbers.delete(own);
  return [...numbers].slice(0, MAX_TASKS);
}

/** The task-list child for `task` of issue `externalId`: its own externalId makes re-imports safe. */
export const taskExternalId = (issueExternalId: string, task: string) => clip(`${issueExternalId}/task:${task}`, 200);

/** The import of a new issue: the item, then its task-list children. */
export function issueImport(payload: IssuesPayload, blockers: string[]): ImportItem[] {
  const externalId = issueExternalId(payload.repository.full_name, payload.issue.number);
  const fields = itemFields(payload);
  const ref = `#${payload.issue.number}`;
  const root: ImportItem = { ref, externalId, title: fields.title, description: fields.description, requires: fields.requires, dependsOn: blockers };
  return [root, ...openTasks(payload.issue.body).map((task, index) => ({ ref: `${ref}/${index + 1}`, parent: ref, title: task, externalId: taskExternalId(externalId, task) }))];
}
