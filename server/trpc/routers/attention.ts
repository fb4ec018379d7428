import { z } from "zod";
import { resolveAttention } from "../../operations/attention";
import { getAttention, listAttention, waitForAttention } from "../../queries/attention";
import { authedProcedure, rolesProcedure, router } from "../init";
import { idempotencyKey, limit, text, uuid, workItemRef, withKey, safeString } from "../schemas";
import { requestAttentionProcedure } from "./leases";

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
    }).default({ limit: 50 }))
    .query(({ ctx, input }) => listAttention(ctx.db, input)),

  get: authedProcedure.input(z.object({ id: uuid })).query(({ ctx, input }) => getAttention(ctx.db, input.id)),

  wait: authedProcedure
    .input(z.object({ id: uuid, timeoutSeconds: z.number().min(1).max(60).default(30) }))
    .query(({ ctx, input, signal }) => waitForAttention(ctx.db, input.id, input.timeoutSeconds, signal)),
});
