import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import type { Caller } from "../domain/types";
import { maySeeProject } from "../domain/scope";
import { notFound } from "../errors";

/*
 * Rule 12 (projects scope tokens) for calls that name one item, lease or attention request: a
 * scoped caller naming one of another project gets the NOT_FOUND a missing id gets (same
 * message, same detail). Unscoped callers cost no statement. An item never changes project,
 * so the check needs no lock.
 */

type Scope = Pick<Caller, "projects">;

async function refuseOutside(db: Db | Tx, caller: Scope, projectOf: () => Promise<{ projectId: string }[]>, what: string, id: string) {
  if (caller.projects.length === 0) return;
  const [row] = await projectOf();
  if (row && !maySeeProject(caller, row.projectId)) throw notFound(what, id);
}

/** Whether a scoped caller names work item `id` of another project (a missing one is not outside). */
export async function itemOutsideScope(db: Db | Tx, caller: Scope, id: string): Promise<boolean> {
  if (caller.projects.length === 0) return false;
  const [row] = await db.$queryRaw<{ projectId: string }[]>`SELECT project_id AS "projectId" FROM work_items WHERE id = ${id}`;
  return row !== undefined && !maySeeProject(caller, row.projectId);
}

/** NOT_FOUND (as `what`) when a scoped caller names work item `id` of another project. */
export const refuseItemOutsideScope = (db: Db | Tx, caller: Scope, id: string, what = "work item") =>
  refuseOutside(db, caller, () => db.$queryRaw`SELECT project_id AS "projectId" FROM work_items WHERE id = ${id}`, what, id);

/** NOT_FOUND when a scoped caller names a lease on an item of another project. */
export const refuseLeaseOutsideScope = (db: Db | Tx, caller: Scope, leaseId: string) =>
  refuseOutside(db, caller, () => db.$queryRaw`
    SELECT w.project_id AS "projectId" FROM leases l JOIN work_items w ON w.id = l.work_item_id WHERE l.id = ${leaseId}::uuid`, "lease", leaseId);

/** NOT_FOUND when a scoped caller names an attention request about an item of another project. */
export const refuseAttentionOutsideScope = (db: Db | Tx, caller: Scope, id: string) =>
  refuseOutside(db, caller, () => db.$queryRaw`
    SELECT w.project_id AS "projectId" FROM attention_requests a JOIN work_items w ON w.id = a.work_item_id WHERE a.id = ${id}::uuid`, "attention request", id);

/** Which of the given items the projects filter `inProjects` (a fragment over `w`) admits. */
export async function itemIdsInProjects(db: Db | Tx, ids: string[], inProjects: Prisma.Sql): Promise<Set<string>> {
  const rows = await db.$queryRaw<{ id: string }[]>`SELECT w.id FROM work_items w WHERE w.id = ANY(${ids}::text[]) AND ${inProjects}`;
  return new Set(rows.map((row) => row.id));
}
