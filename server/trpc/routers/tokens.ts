import { z } from "zod";
import { createToken, listTokens, revokeToken } from "../../auth/tokens";
import { ROLES } from "../../domain/contract";
import { rolesProcedure, router } from "../init";
import { capabilities, projectId, safeString, uuid, workerId } from "../schemas";

const admin = rolesProcedure();

export const tokensRouter = router({
  create: admin
    .input(z.object({
      role: z.enum(ROLES),
      workerId: workerId.optional(),
      label: safeString().max(200).optional(),
      projects: z.array(projectId).max(100).optional(),
      capabilities: capabilities.optional(),
    }))
    .mutation(({ ctx, input }) => createToken(ctx.db, input)),
  list: admin.query(({ ctx }) => listTokens(ctx.db)),
  revoke: admin.input(z.object({ id: uuid })).mutation(({ ctx, input }) => revokeToken(ctx.db, input.id)),
});
