import type { Db } from "../db";
import { inTransaction, type Tx } from "../database/transaction";
import { idempotencyScope } from "../domain/idempotency";
import type { WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { notFound, WorkGraphError } from "../errors";
import { appendEvents } from "../sql/events";
import { lockGraphShape, lockInIdOrder, shiftDescendantsInheritedDependencies, waitsForReaches } from "../sql/graph";
import { idempotent } from "./idempotent";
import { deleteDependency, insertDependency, selectWorkItem, shiftOpenDependencies, statusOf } from "../sql/work-items";
import { refuseItemOutsideScope } from "../sql/visibility";

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
async function lockEdgeEnds(tx: Tx, caller: Caller, input: DependencyInput) {
  await refuseItemOutsideScope(tx, caller, input.workItemId);
  await refuseItemOutsideScope(tx, caller, input.dependsOnId);
  await lockInIdOrder(tx, [input.workItemId, input.dependsOnId], input.workItemId);
  const dependentStatus = await statusOf(tx, input.workItemId);
  if (!dependentStatus) throw notFound("work item", input.workItemId);
  const blockerStatus = await statusOf(tx, input.dependsOnId);
  if (!blockerStatus) throw notFound("work item", input.dependsOnId);
  return { dependentStatus, blockerOpen: blockerStatus === "open" };
}

/** Counts a (removed or added) open blocker on the dependent and everything under it. */
async function shiftOpenBlocker(tx: Tx, dependentId: string, delta: 1 | -1) {
  await shiftOpenDependencies(tx, dependentId, delta);
  await shiftDescendantsInheritedDependencies(tx, dependentId, delta);
}

/**
 * A new dependency never pre-empts a live lease (rule 5 (no pre-emption)): the item stays leased and the new
 * blocker only matters for its next claim.
 */
export async function addDependency(db: Db, caller: Caller, input: DependencyInput): Promise<WorkItem> {
  return inTransaction(db, (tx) =>
    idempotent(tx, idempotencyScope(caller), input.idempotencyKey, "workItems.addDependency", input, async () => {
      if (input.workItemId === input.dependsOnId) {
        throw new WorkGraphError("DEPENDENCY_CYCLE", `work item ${input.workItemId} cannot depend on itself`, { workItemId: input.workItemId });
      }
      await lockGraphShape(tx);
      const { dependentStatus, blockerOpen } = await lockEdgeEnds(tx, caller, input);
      if (dependentStatus !== "open") {
        throw new WorkGraphError("ALREADY_TERMINAL", `work item ${input.workItemId} is already ${dependentStatus}`, { workItemId: input.workItemId, status: dependentStatus });
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
      if (!(await insertDependency(tx, input.workItemId, input.dependsOnId))) {
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
    const { blockerOpen } = await lockEdgeEnds(tx, caller, input);
    if (!(await deleteDependency(tx, input.workItemId, input.dependsOnId))) {
      throw new WorkGraphError("NOT_FOUND", `${input.workItemId} does not depend on ${input.dependsOnId}`, { workItemId: input.workItemId, dependsOnId: input.dependsOnId });
    }
    if (blockerOpen) await shiftOpenBlocker(tx, input.workItemId, -1);
    await appendEvents(tx, [{ workItemId: input.workItemId, type: "dependency.removed", actor: caller.actor, data: { dependsOnId: input.dependsOnId } }]);
    return (await selectWorkItem(tx, input.workItemId))!;
  });
}
