import { z } from "zod";
import { requestAttention, resolveAttention } from "../../operations/attention";
import { getAttention, listAttention, waitForAttention } from "../../queries/attention";
import { assertActsForSelf } from "../identity";
import { authedProcedure, rolesProcedure, router } from "../init";
import { attentionKind, idempotencyKey, leaseRef, limit, projectId, safeString, text, uuid, workItemRef, withKey } from "../schemas";

const attentionRequestInput = z.object({
  ...leaseRef,
  kind: attentionKind,
  question: text("question", 20_000),
  context: safeString().max(100_000).nullish(),
  options: z.array(safeString().min(1).max(2_000)).max(50).optional(),
  blocking: z.boolean().default(true),
  idempotencyKey: idempotencyKey.optional(),
  key: idempotencyKey.optional(),
});

const requestAttentionProcedure = rolesProcedure("agent").input(attentionRequestInput).mutation(({ ctx, input }) => {
  assertActsForSelf(ctx.caller, input.workerId);
  return requestAttention(ctx.db, ctx.caller, withKey(input));
});

export const attentionRouter = router({
  request: requestAttentionProcedure,

  resolve: rolesProcedure("operator")
    .input(z.object({ id: uuid, resolution: text("resolution", 100_000), idempotencyKey: idempotencyKey.optional(), key: idempotencyKey.optional() }))
    .mutation(({ ctx, input }) => resolveAttention(ctx.db, ctx.caller, withKey(input))),

  list: authedProcedure
    .input(z.object({
      status: z.enum(["open", "resolved"]).optional(),
      workItemId: workItemRef.optional(),
      limit: limit(200, 50),
      cursor: safeString().max(400).optional(),
      projectId: projectId.optional(),
    }).default({ limit: 50 }))
    .query(({ ctx, input }) => listAttention(ctx.db, ctx.caller, input)),

  get: authedProcedure.input(z.object({ id: uuid })).query(({ ctx, input }) => getAttention(ctx.db, ctx.caller, input.id)),

  wait: authedProcedure
    .input(z.object({ id: uuid, timeoutSeconds: z.number().min(1).max(60).default(30) }))
    .query(({ ctx, input, signal }) => waitForAttention(ctx.instance, ctx.caller, input.id, input.timeoutSeconds, signal)),
});
