import { z } from "zod";

/*
 * GitHub issues in (docs/github.md): what an `issues` webhook payload says about its work item.
 * The payload's fields the bridge reads; the mapping of an issue to items is in
 * packages/contract/src/github.ts (shared with the CLI's back-fill).
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

/** Whether the issue carries `wanted` (GitHub compares label names without case). */
export const hasLabel = (labels: { name: string }[], wanted: string) => labels.some((entry) => entry.name.toLowerCase() === wanted.toLowerCase());

