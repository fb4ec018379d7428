import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import type { WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { notFound, WorkGraphError } from "../errors";
import { appendEvents } from "../sql/events";
import { lockItem } from "../sql/fencing";
import { isAncestorOrSelf, lockAncestorChain, lockGraphShape, shiftDescendantsInheritedDependencies, waitsForReaches } from "../sql/graph";
import { selectWorkItem, setParent, shiftOpenChildren } from "../sql/work-items";
import { refuseItemOutsideScope } from "../sql/visibility";

/** Reparents `id` under `parentId` (or makes it a root), carrying its subtree and re-deriving inherited blockers. */
export async function moveWorkItem(db: Db, caller: Caller, input: { id: string; parentId: string | null }): Promise<WorkItem> {
  return inTransaction(db, async (tx) => {
    await refuseItemOutsideScope(tx, caller, input.id);
    if (input.parentId !== null) await refuseItemOutsideScope(tx, caller, input.parentId, "parent work item");
    await lockGraphShape(tx);
    const item = await lockItem(tx, input.id);
    if (!item) throw notFound("work item", input.id);
    if (input.parentId === input.id) {
      throw new WorkGraphError("DEPENDENCY_CYCLE", `work item ${input.id} cannot be its own parent`, { workItemId: input.id });
    }
    if (item.parentId === input.parentId) return (await selectWorkItem(tx, input.id))!;
    if (input.parentId !== null) {
      // Reparenting under its own descendant would loop the hierarchy itself: refuse before touching it.
      if (await isAncestorOrSelf(tx, input.parentId, input.id)) {
        throw new WorkGraphError("DEPENDENCY_CYCLE", `${input.parentId} is inside ${input.id}'s subtree; ${input.id} cannot move under it`, {
          workItemId: input.id,
          parentId: input.parentId,
        });
      }
    }

    const oldParent = item.parentId === null ? null : await lockAncestorChain(tx, item.parentId);
    const newParent = input.parentId === null ? null : await lockAncestorChain(tx, input.parentId);
    if (input.parentId !== null && !newParent) throw notFound("parent work item", input.parentId);
    const itemProject = (await selectWorkItem(tx, input.id))!.projectId;
    if (newParent && newParent.projectId !== itemProject) {
      throw new WorkGraphError("VALIDATION", `${input.id} is in project ${itemProject}; a parent must be in the same project, ${input.parentId} is in ${newParent.projectId}`, {
        workItemId: input.id, parentId: input.parentId, projectId: itemProject, parentProjectId: newParent.projectId,
      });
    }
    if (newParent && newParent.status !== "open") {
      throw new WorkGraphError("ALREADY_TERMINAL", `parent ${input.parentId} is already ${newParent.status}`, { workItemId: input.parentId, status: newParent.status });
    }

    const delta = (newParent?.inherited ?? 0) - (oldParent?.inherited ?? 0);
    await setParent(tx, input.id, input.parentId, delta);
    await shiftDescendantsInheritedDependencies(tx, input.id, delta);
    if (item.status === "open") {
      if (item.parentId !== null) await shiftOpenChildren(tx, item.parentId, -1);
      if (input.parentId !== null) await shiftOpenChildren(tx, input.parentId, 1);
    }
    // New waits-for edges: the new parent waits for the item; the item's subtree waits for the new ancestors' blockers.
    // Reaching the item in mode "up" means reaching one of its descendants, which then waits for itself.
    if (input.parentId !== null) {
      const cycle =
        (await waitsForReaches(tx, [{ id: input.id, up: false }], [{ id: input.parentId, up: false }])) ||
        (await waitsForReaches(tx, [{ id: input.parentId, up: true }], [{ id: input.id, up: false }, { id: input.id, up: true }]));
      if (cycle) {
        throw new WorkGraphError("DEPENDENCY_CYCLE", `moving ${input.id} under ${input.parentId} would make it wait for itself`, {
          workItemId: input.id,
          parentId: input.parentId,
        });
      }
    }
    await appendEvents(tx, [{ workItemId: input.id, type: "work_item.moved", actor: caller.actor, data: { from: item.parentId, to: input.parentId } }]);
    return (await selectWorkItem(tx, input.id))!;
  });
}
