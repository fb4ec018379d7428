import { inputs } from "@work-graph/contract";
import { drainWorker, undrainWorker } from "../../operations/drain";
import { listWorkers } from "../../queries/workers";
import { authedProcedure, rolesProcedure, router } from "../init";

const operator = rolesProcedure("operator");

export const workersRouter = router({
  list: authedProcedure.input(inputs["workers.list"]).query(({ ctx }) => listWorkers(ctx.db, undefined, ctx.caller)),
  drain: operator
    .input(inputs["workers.drain"])
    .mutation(({ ctx, input }) => drainWorker(ctx.db, ctx.caller, { workerId: input.workerId, reason: input.reason?.trim() || undefined })),
  undrain: operator.input(inputs["workers.undrain"]).mutation(({ ctx, input }) => undrainWorker(ctx.db, ctx.caller, input)),
});
