import { Prisma } from "../generated/prisma/client";
import { DEFAULT_PROJECT } from "@work-graph/contract";
import type { Caller } from "./types";

/*
 * Rule 12 (projects scope tokens): a token with `projects` sees and touches only items of those
 * projects. Every read and write that names or lists items filters with these fragments, so a
 * scoped caller cannot even learn that an item of another project exists (NOT_FOUND, empty pages,
 * zero counts).
 */

/** SQL that is true when the caller may see a row whose project id is `column` (default `w.project_id`). */
export function inCallerScope(caller: Pick<Caller, "projects">, column: Prisma.Sql = Prisma.raw("w.project_id")): Prisma.Sql {
  return caller.projects.length === 0 ? Prisma.sql`true` : Prisma.sql`${column} = ANY(${caller.projects}::text[])`;
}

/**
 * `AND` the item `workItemColumn` names is in `projects` (a row that is not an item itself: a
 * lease, an event), or nothing at all for an unscoped caller, so its statement stays as it was.
 */
export function itemInProjects(projects: string[], workItemColumn: Prisma.Sql): Prisma.Sql {
  return projects.length === 0
    ? Prisma.empty
    : Prisma.sql`AND EXISTS (SELECT 1 FROM work_items s WHERE s.id = ${workItemColumn} AND s.project_id = ANY(${projects}::text[]))`;
}

/** Whether the caller may see a project: unscoped callers see every one. */
export function maySeeProject(caller: Pick<Caller, "projects">, projectId: string): boolean {
  return caller.projects.length === 0 || caller.projects.includes(projectId);
}

/**
 * The caller's scope narrowed by an optional `projectId` filter, as SQL over `column`: a filter
 * outside the scope matches nothing (it reveals nothing either).
 */
export function inProjects(caller: Pick<Caller, "projects">, projectId: string | undefined, column: Prisma.Sql = Prisma.raw("w.project_id")): Prisma.Sql {
  if (projectId === undefined) return inCallerScope(caller, column);
  return maySeeProject(caller, projectId) ? Prisma.sql`${column} = ${projectId}` : Prisma.sql`false`;
}

/** The project a caller's new root item goes to when none is given: an agent token scoped to exactly one project creates there. */
export function defaultProjectOf(caller: Pick<Caller, "projects" | "role">): string {
  return caller.role === "agent" && caller.projects.length === 1 ? caller.projects[0]! : DEFAULT_PROJECT;
}
