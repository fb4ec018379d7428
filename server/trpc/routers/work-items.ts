import { inputs } from "@work-graph/contract";
import { cancelWorkItem } from "../../operations/cancel-item";
import { createWorkItem } from "../../operations/create";
import { importWorkItems } from "../../operations/import";
import { addDependency, removeDependency } from "../../operations/dependencies";
import { moveWorkItem } from "../../operations/move";
import { setPriority } from "../../operations/priority";
import { updateWorkItem } from "../../operations/update-item";
import { getWorkItem, listWorkItems, queue } from "../../queries/work-items";
import { authedProcedure, rolesProcedure, router } from "../init";
import { parseImportItems, withKey } from "../input";

export const workItemsRouter = router({
  create: rolesProcedure("operator", "agent")
    .input(inputs["workItems.create"])
    .mutation(({ ctx, input }) => createWorkItem(ctx.db, ctx.caller, withKey(input))),

  import: rolesProcedure("operator")
    .input(inputs["workItems.import"])
    .mutation(({ ctx, input }) => importWorkItems(ctx.db, ctx.caller, { ...withKey(input), items: parseImportItems(input.items) })),

  get: authedProcedure.input(inputs["workItems.get"]).query(({ ctx, input }) => getWorkItem(ctx.db, ctx.caller, input.id)),

  list: authedProcedure
    .input(inputs["workItems.list"])
    .query(({ ctx, input }) => listWorkItems(ctx.db, ctx.caller, input)),

  queue: authedProcedure
    .input(inputs["workItems.queue"])
    .query(({ ctx, input }) => queue(ctx.db, ctx.caller, { ...input, workerId: input.workerId ?? ctx.caller.workerId })),

  addDependency: rolesProcedure("operator", "agent")
    .input(inputs["workItems.addDependency"])
    .mutation(({ ctx, input }) => addDependency(ctx.db, ctx.caller, withKey(input))),

  removeDependency: rolesProcedure("operator", "agent")
    .input(inputs["workItems.removeDependency"])
    .mutation(({ ctx, input }) => removeDependency(ctx.db, ctx.caller, input)),

  move: rolesProcedure("operator")
    .input(inputs["workItems.move"])
    .mutation(({ ctx, input }) => moveWorkItem(ctx.db, ctx.caller, input)),

  update: rolesProcedure("operator")
    .input(inputs["workItems.update"])
    .mutation(({ ctx, input }) => updateWorkItem(ctx.db, ctx.caller, input)),

  setPriority: rolesProcedure("operator")
    .input(inputs["workItems.setPriority"])
    .mutation(({ ctx, input }) => setPriority(ctx.db, ctx.caller, input)),

  cancel: rolesProcedure("operator")
    .input(inputs["workItems.cancel"])
    .mutation(({ ctx, input }) => cancelWorkItem(ctx.db, ctx.caller, input)),
});
