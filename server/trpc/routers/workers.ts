import { z } from "zod";
import { drainWorker, undrainWorker } from "../../operations/drain";
import { listWorkers } from "../../queries/workers";
import { authedProcedure, rolesProcedure, router } from "../init";
import { safeString, workerId } from "../schemas";

const operator = rolesProcedure("operator");

export const workersRouter = router({
  list: authedProcedure.input(z.object({}).default({})).query(({ ctx }) => listWorkers(ctx.db, undefined, ctx.caller)),
  drain: operator
    .input(z.object({ workerId, reason: safeString().max(2_000).optional() }))
    .mutation(({ ctx, input }) => drainWorker(ctx.db, ctx.caller, { workerId: input.workerId, reason: input.reason?.trim() || undefined })),
  undrain: operator.input(z.object({ workerId })).mutation(({ ctx, input }) => undrainWorker(ctx.db, ctx.caller, input)),
});
