import { inputs } from "@work-graph/contract";
import { listNotes } from "../../queries/notes";
import { authedProcedure, router } from "../init";

export const notesRouter = router({
  list: authedProcedure
    .input(inputs["notes.list"])
    .query(({ ctx, input }) => listNotes(ctx.db, ctx.caller, input)),
});
