import type { Db } from "../db";
import { inTransaction, type Tx } from "../database/transaction";
import { appendEvents } from "../domain/events";
import { idempotent, idempotencyScope } from "../domain/idempotency";
import { lockGraphShape, lockInIdOrder, shiftDescendantsInheritedDependencies, waitsForReaches } from "../domain/readiness";
import type { Caller, WorkItem } from "../domain/types";
import { selectWorkItem } from "../domain/views";
import { notFound, WorkGraphError } from "../errors";

export interface DependencyInput {
  workItemId: string;
  dependsOnId: string;
  idempotencyKey?: string;
}

/**
 * Locks the dependent and its subtree (their counters change) and the blocker (its status is
 * read), all in one statement in id order — the global lock order a concurrent release of any
 * of them follows too.
 */
async function lockEdgeEnds(tx: Tx, input: DependencyInput) {
  await lockInIdOrder(tx, [input.workItemId, input.dependsOnId], input.workItemId);
  const [dependent] = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM work_items WHERE id = ${input.workItemId}`;
  if (!dependent) throw notFound("work item", input.workItemId);
  const [blocker] = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM work_items WHERE id = ${input.dependsOnId}`;
  if (!blocker) throw notFound("work item", input.dependsOnId);
  return { dependent, blockerOpen: blocker.status === "open" };
}

/** Counts a (removed or added) open blocker on the dependent and everything under it. */
async function shiftOpenBlocker(tx: Tx, dependentId: string, delta: 1 | -1) {
  await tx.$executeRaw`UPDATE work_items SET open_dependency_count = open_dependency_count + ${delta}, updated_at = clock_timestamp()
    WHERE id = ${dependentId}`;
  await shiftDescendantsInheritedDependencies(tx, dependentId, delta);
}

/**
 * A new dependency never pre-empts a live lease (rule 5): the item stays leased and the new
 * blocker only matters for its next claim.
 */
export async function addDependency(db: Db, caller: Caller, input: DependencyInput): Promise<WorkItem> {
  return inTransaction(db, (tx) =>
    idempotent(tx, idempotencyScope(caller), input.idempotencyKey, "workItems.addDependency", input, async () => {
      if (input.workItemId === input.dependsOnId) {
        throw new WorkGraphError("DEPENDENCY_CYCLE", `work item ${input.workItemId} cannot depend on itself`, { workItemId: input.workItemId });
      }
      await lockGraphShape(tx);
      const { dependent, blockerOpen } = await lockEdgeEnds(tx, input);
      if (dependent.status !== "open") {
        throw new WorkGraphError("ALREADY_TERMINAL", `work item ${input.workItemId} is already ${dependent.status}`, { workItemId: input.workItemId, status: dependent.status });
      }
      // New waits-for edges: the dependent and all its descendants wait for the blocker.
      const cycle = await waitsForReaches(tx, [{ id: input.dependsOnId, up: false }], [
        { id: input.workItemId, up: false },
        { id: input.workItemId, up: true },
      ]);
      if (cycle) {
        throw new WorkGraphError("DEPENDENCY_CYCLE", `${input.dependsOnId} already waits for ${input.workItemId}; the dependency would close a cycle`, {
          workItemId: input.workItemId,
          dependsOnId: input.dependsOnId,
        });
      }
      const added = await tx.$executeRaw`INSERT INTO dependencies (work_item_id, depends_on_id)
        VALUES (${input.workItemId}, ${input.dependsOnId}) ON CONFLICT DO NOTHING`;
      if (added === 0) {
        throw new WorkGraphError("DUPLICATE", `${input.workItemId} already depends on ${input.dependsOnId}`, { workItemId: input.workItemId, dependsOnId: input.dependsOnId });
      }
      if (blockerOpen) await shiftOpenBlocker(tx, input.workItemId, 1);
      await appendEvents(tx, [{ workItemId: input.workItemId, type: "dependency.added", actor: caller.actor, data: { dependsOnId: input.dependsOnId } }]);
      return (await selectWorkItem(tx, input.workItemId))!;
    }),
  );
}

export async function removeDependency(db: Db, caller: Caller, input: DependencyInput): Promise<WorkItem> {
  return inTransaction(db, async (tx) => {
    await lockGraphShape(tx);
    const { blockerOpen } = await lockEdgeEnds(tx, input);
    const removed = await tx.$executeRaw`DELETE FROM dependencies WHERE work_item_id = ${input.workItemId} AND depends_on_id = ${input.dependsOnId}`;
    if (removed === 0) {
      throw new WorkGraphError("NOT_FOUND", `${input.workItemId} does not depend on ${input.dependsOnId}`, { workItemId: input.workItemId, dependsOnId: input.dependsOnId });
    }
    if (blockerOpen) await shiftOpenBlocker(tx, input.workItemId, -1);
    await appendEvents(tx, [{ workItemId: input.workItemId, type: "dependency.removed", actor: caller.actor, data: { dependsOnId: input.dependsOnId } }]);
    return (await selectWorkItem(tx, input.workItemId))!;
  });
}
