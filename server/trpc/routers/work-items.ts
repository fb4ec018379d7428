import { z } from "zod";
import { cancelWorkItem } from "../../operations/cancel-item";
import { createWorkItem } from "../../operations/create";
import { importWorkItems } from "../../operations/import";
import { addDependency, removeDependency } from "../../operations/dependencies";
import { moveWorkItem } from "../../operations/move";
import { setPriority } from "../../operations/priority";
import { updateWorkItem } from "../../operations/update-item";
import { getWorkItem, listWorkItems, queue } from "../../queries/work-items";
import { authedProcedure, rolesProcedure, router } from "../init";
import { capabilities, concurrencyKey, delaySeconds, externalId, isoTime, projectId } from "../schemas";
import { parseImportItems } from "../schemas";
import { withKey, description, idempotencyKey, limit, newWorkItemId, priority, stage, text, title, workerId, workItemRef, safeString } from "../schemas";

export const workItemsRouter = router({
  create: rolesProcedure("operator", "agent")
    .input(z.object({
      id: newWorkItemId.optional(),
      title,
      description,
      parentId: workItemRef.nullish(),
      dependsOn: z.array(workItemRef).max(100).optional(),
      priority: priority.optional(),
      idempotencyKey: idempotencyKey.optional(),
      key: idempotencyKey.optional(),
      projectId: projectId.optional(),
      requires: capabilities.optional(),
      concurrencyKey: concurrencyKey.nullish(),
      notBefore: isoTime.optional(),
      delaySeconds: delaySeconds.optional(),
      externalId: externalId.optional(),
    }))
    .mutation(({ ctx, input }) => createWorkItem(ctx.db, ctx.caller, withKey(input))),

  import: rolesProcedure("operator")
    .input(z.object({
      projectId: projectId.optional(),
      items: z.array(z.unknown()).min(1).max(1000),
      dryRun: z.boolean().default(false),
      idempotencyKey: idempotencyKey.optional(),
      key: idempotencyKey.optional(),
    }))
    .mutation(({ ctx, input }) => importWorkItems(ctx.db, ctx.caller, { ...withKey(input), items: parseImportItems(input.items) })),

  get: authedProcedure.input(z.object({ id: workItemRef })).query(({ ctx, input }) => getWorkItem(ctx.db, ctx.caller, input.id)),

  list: authedProcedure
    .input(z.object({
      stage: z.union([stage, z.array(stage).max(7)]).optional(),
      parentId: workItemRef.optional(),
      search: safeString().max(200).optional(),
      limit: limit(200, 50),
      cursor: safeString().max(400).optional(),
      projectId: projectId.optional(),
      externalId: externalId.optional(),
    }).default({ limit: 50 }))
    .query(({ ctx, input }) => listWorkItems(ctx.db, ctx.caller, input)),

  queue: authedProcedure
    .input(z.object({ limit: limit(200, 50), workerId: workerId.optional(), projectId: projectId.optional(), capabilities: capabilities.optional() }).default({ limit: 50 }))
    .query(({ ctx, input }) => queue(ctx.db, ctx.caller, { ...input, workerId: input.workerId ?? ctx.caller.workerId })),

  addDependency: rolesProcedure("operator", "agent")
    .input(z.object({ workItemId: workItemRef, dependsOnId: workItemRef, idempotencyKey: idempotencyKey.optional(), key: idempotencyKey.optional() }))
    .mutation(({ ctx, input }) => addDependency(ctx.db, ctx.caller, withKey(input))),

  removeDependency: rolesProcedure("operator", "agent")
    .input(z.object({ workItemId: workItemRef, dependsOnId: workItemRef }))
    .mutation(({ ctx, input }) => removeDependency(ctx.db, ctx.caller, input)),

  move: rolesProcedure("operator")
    .input(z.object({ id: workItemRef, parentId: workItemRef.nullable() }))
    .mutation(({ ctx, input }) => moveWorkItem(ctx.db, ctx.caller, input)),

  update: rolesProcedure("operator")
    .input(z.object({
      id: workItemRef,
      title: title.optional(),
      description,
      requires: capabilities.optional(),
      concurrencyKey: concurrencyKey.nullable().optional(),
      notBefore: isoTime.nullable().optional(),
    }))
    .mutation(({ ctx, input }) => updateWorkItem(ctx.db, ctx.caller, input)),

  setPriority: rolesProcedure("operator")
    .input(z.object({ id: workItemRef, priority }))
    .mutation(({ ctx, input }) => setPriority(ctx.db, ctx.caller, input)),

  cancel: rolesProcedure("operator")
    .input(z.object({ id: workItemRef, reason: text("reason", 10_000) }))
    .mutation(({ ctx, input }) => cancelWorkItem(ctx.db, ctx.caller, input)),
});
