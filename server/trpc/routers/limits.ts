import { inputs } from "@work-graph/contract";
import { removeLimit, setLimit } from "../../operations/limits";
import { listLimits } from "../../queries/limits";
import { authedProcedure, rolesProcedure, router } from "../init";

/** Rule 14's concurrency limits: operators set them, everyone may read them. */
export const limitsRouter = router({
  set: rolesProcedure("operator")
    .input(inputs["limits.set"])
    .mutation(({ ctx, input }) => setLimit(ctx.db, input)),

  delete: rolesProcedure("operator")
    .input(inputs["limits.delete"])
    .mutation(({ ctx, input }) => removeLimit(ctx.db, input)),

  list: authedProcedure.input(inputs["limits.list"]).query(({ ctx }) => listLimits(ctx.db)),
});
