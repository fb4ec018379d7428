import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { DEFAULT_PROJECT, type ImportItem } from "@work-graph/contract";
import { idempotencyScope } from "../domain/idempotency";
import {
  boundaryStates, externalKey, firstOnCycle, planImport, refused, shapeImport,
  type ExistingItem,
} from "../domain/import-plan";
import { defaultProjectOf, maySeeProject } from "../domain/scope";
import type { WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { notFound, WorkGraphError } from "../errors";
import { appendEvents } from "../sql/events";
import { lockAncestorChains, lockGraphShape, waitsForPairs } from "../sql/graph";
import { idempotent } from "./idempotent";
import { addOpenChildren, insertPlannedDependencies, insertPlannedItems, selectByExternalIds } from "../sql/import";
import { firstUnknownProject } from "../sql/projects";
import { selectWorkItemsById } from "../sql/work-items";

export interface ImportInput {
  projectId?: string;
  items: ImportItem[];
  dryRun?: boolean;
  idempotencyKey?: string;
}

export interface ImportResult {
  created: WorkItem[];
  existing: { ref: string; id: string }[];
  refs: Record<string, string>;
}

/** A dry run's result, thrown to roll its transaction back. */
class DryRunDone {
  constructor(readonly result: ImportResult) {}
}

/** workItems.import (docs/api.md "Import"): the whole plan in one transaction, or nothing. */
export async function importWorkItems(db: Db, caller: Caller, input: ImportInput): Promise<ImportResult> {
  try {
    return await inTransaction(db, (tx) =>
      idempotent(tx, idempotencyScope(caller), input.idempotencyKey, "workItems.import", input, async () => {
        const shape = shapeImport(input.items);
        const projectId = input.projectId ?? defaultProjectOf(caller);
        if (!maySeeProject(caller, projectId)) throw new WorkGraphError("FORBIDDEN", `this token may not create items in project ${projectId}`, { projectId });
        // Imports and other graph-shape edits take turns: a re-run sees the first run's items, and no cycle slips in between.
        await lockGraphShape(tx);
        if (projectId !== DEFAULT_PROJECT && (await firstUnknownProject(tx, [projectId])) !== undefined) throw notFound("project", projectId);

        const externalIds = [...new Set(input.items.flatMap((item) => (item.externalId === undefined ? [] : [item.externalId])))];
        const matches = await selectByExternalIds(tx, externalIds);
        const givenIds = input.items.flatMap((item) => (item.id === undefined ? [] : [item.id]));
        const rows = await lockAncestorChains(tx, [...shape.namedIds, ...matches.map((match) => match.id)], givenIds);
        const existing = new Map<string, ExistingItem>();
        for (const row of rows) if (maySeeProject(caller, row.projectId)) existing.set(row.id, row);
        const plan = planImport(shape, {
          projectId,
          projectGiven: input.projectId !== undefined,
          existing,
          byExternalId: new Map(matches.map((match) => [externalKey(match.projectId, match.externalId), match.id])),
          takenIds: new Set(rows.map((row) => row.id).filter((id) => givenIds.includes(id))),
        });

        const { exits, entries } = boundaryStates(plan);
        const onCycle = firstOnCycle(plan, await waitsForPairs(tx, exits, entries));
        if (onCycle) throw refused("DEPENDENCY_CYCLE", input.items[onCycle.index]!.ref, `work item ${onCycle.id} would wait for itself`, { workItemId: onCycle.id });

        if (plan.rows.length > 0) {
          const inserted = new Set(await insertPlannedItems(tx, plan.rows));
          const lost = plan.rows.find((row) => !inserted.has(row.id));
          // Only a concurrent create outside the graph-shape lock gets here (a generated id or an external id taken meanwhile).
          if (lost) throw refused("DUPLICATE", input.items[lost.index]!.ref, `work item ${lost.id} or its externalId exists already`, { id: lost.id });
          await insertPlannedDependencies(tx, plan.rows);
          await addOpenChildren(tx, plan.newChildren);
          await appendEvents(tx, plan.rows.map((row) => ({
            workItemId: row.id,
            type: "work_item.created",
            actor: caller.actor,
            data: { title: row.title, parentId: row.parentId, priority: row.priority, dependsOn: row.dependsOn },
          })));
        }
        const inInputOrder = [...plan.rows].sort((a, b) => a.index - b.index).map((row) => row.id);
        const result: ImportResult = { created: await selectWorkItemsById(tx, inInputOrder), existing: plan.existing, refs: plan.refs };
        if (input.dryRun) throw new DryRunDone(result);
        return result;
      }),
    );
  } catch (error) {
    if (error instanceof DryRunDone) return error.result;
    throw error;
  }
}
