import { inputs } from "@work-graph/contract";
import { requestAttention, resolveAttention } from "../../operations/attention";
import { getAttention, listAttention, waitForAttention } from "../../queries/attention";
import { assertActsForSelf } from "../identity";
import { authedProcedure, rolesProcedure, router } from "../init";
import { withKey } from "../input";

const requestAttentionProcedure = rolesProcedure("agent").input(inputs["attention.request"]).mutation(({ ctx, input }) => {
  assertActsForSelf(ctx.caller, input.workerId);
  return requestAttention(ctx.db, ctx.caller, withKey(input));
});

export const attentionRouter = router({
  request: requestAttentionProcedure,

  resolve: rolesProcedure("operator")
    .input(inputs["attention.resolve"])
    .mutation(({ ctx, input }) => resolveAttention(ctx.db, ctx.caller, withKey(input))),

  list: authedProcedure
    .input(inputs["attention.list"])
    .query(({ ctx, input }) => listAttention(ctx.db, ctx.caller, input)),

  get: authedProcedure.input(inputs["attention.get"]).query(({ ctx, input }) => getAttention(ctx.db, ctx.caller, input.id)),

  wait: authedProcedure
    .input(inputs["attention.wait"])
    .query(({ ctx, input, signal }) => waitForAttention(ctx.db, ctx.caller, input.id, input.timeoutSeconds, signal)),
});
