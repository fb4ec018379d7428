import { z } from "zod";
import { removeLimit, setLimit } from "../../operations/limits";
import { listLimits } from "../../queries/limits";
import { authedProcedure, rolesProcedure, router } from "../init";
import { concurrencyKey } from "../schemas";

/** Rule 14's concurrency limits: operators set them, everyone may read them. */
export const limitsRouter = router({
  set: rolesProcedure("operator")
    .input(z.object({ key: concurrencyKey, maxLeases: z.number().int().min(0).max(10_000) }))
    .mutation(({ ctx, input }) => setLimit(ctx.db, input)),

  delete: rolesProcedure("operator")
    .input(z.object({ key: concurrencyKey }))
    .mutation(({ ctx, input }) => removeLimit(ctx.db, input)),

  list: authedProcedure.input(z.object({}).default({})).query(({ ctx }) => listLimits(ctx.db)),
});
