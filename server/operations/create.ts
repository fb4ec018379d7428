import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { idempotencyScope } from "../domain/idempotency";
import { defaultProjectOf } from "../domain/scope";
import type { WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { lockGraphShape } from "../sql/graph";
import { idempotent } from "./idempotent";
import { insertWorkItems, selectWorkItem } from "../sql/work-items";

export interface CreateInput {
  id?: string;
  title: string;
  description?: string | null;
  parentId?: string | null;
  dependsOn?: string[];
  priority?: number;
  idempotencyKey?: string;
  projectId?: string;
  requires?: string[];
  concurrencyKey?: string | null;
  notBefore?: string;
  delaySeconds?: number;
  externalId?: string;
}

export async function createWorkItem(db: Db, caller: Caller, input: CreateInput): Promise<WorkItem> {
  return inTransaction(db, (tx) =>
    idempotent(tx, idempotencyScope(caller), input.idempotencyKey, "workItems.create", input, async () => {
      const parentId = input.parentId ?? null;
      // A root item without dependencies cannot close a cycle: no need to wait on other graph edits.
      if (parentId !== null || (input.dependsOn?.length ?? 0) > 0) await lockGraphShape(tx);
      // A child is in its parent's project: only a root falls back to the caller's default.
      const projectId = input.projectId ?? (parentId === null ? defaultProjectOf(caller) : undefined);
      const [id] = await insertWorkItems(tx, parentId, [input], caller.actor, { projectId, scope: caller.projects });
      return (await selectWorkItem(tx, id!))!;
    }),
  );
}
