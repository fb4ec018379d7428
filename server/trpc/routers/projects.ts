import { inputs } from "@work-graph/contract";
import { createProject, listProjects } from "../../operations/projects";
import { authedProcedure, rolesProcedure, router } from "../init";

export const projectsRouter = router({
  create: rolesProcedure()
    .input(inputs["projects.create"])
    .mutation(({ ctx, input }) => createProject(ctx.db, input)),
  list: authedProcedure.input(inputs["projects.list"]).query(({ ctx }) => listProjects(ctx.db, ctx.caller)),
});
