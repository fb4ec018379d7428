import { z } from "zod";
import { createProject, listProjects } from "../../operations/projects";
import { authedProcedure, rolesProcedure, router } from "../init";
import { projectId, text } from "../schemas";

export const projectsRouter = router({
  create: rolesProcedure()
    .input(z.object({ id: projectId, name: text("name", 200) }))
    .mutation(({ ctx, input }) => createProject(ctx.db, input)),
  list: authedProcedure.input(z.object({}).default({})).query(({ ctx }) => listProjects(ctx.db, ctx.caller)),
});
