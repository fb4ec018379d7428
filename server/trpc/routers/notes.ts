import { z } from "zod";
import { listNotes } from "../../queries/notes";
import { authedProcedure, router } from "../init";
import { limit, safeString, workItemRef } from "../schemas";

export const notesRouter = router({
  list: authedProcedure
    .input(z.object({ workItemId: workItemRef, limit: limit(200, 50), cursor: safeString().max(400).optional(), order: z.enum(["asc", "desc"]).default("asc") }))
    .query(({ ctx, input }) => listNotes(ctx.db, ctx.caller, input)),
});
