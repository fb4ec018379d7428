import { inputs } from "@work-graph/contract";
import { createToken, listTokens, revokeToken } from "../../auth/tokens";
import { rolesProcedure, router } from "../init";

const admin = rolesProcedure();

export const tokensRouter = router({
  create: admin
    .input(inputs["tokens.create"])
    .mutation(({ ctx, input }) => createToken(ctx.db, input)),
  list: admin.query(({ ctx }) => listTokens(ctx.db)),
  revoke: admin.input(inputs["tokens.revoke"]).mutation(({ ctx, input }) => revokeToken(ctx.db, input.id)),
});
