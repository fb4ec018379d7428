import { tracked, TRPCError } from "@trpc/server";
import { z } from "zod";
import { WorkGraphError } from "../../errors";
import { listEvents } from "../../queries/events";
import { openEventStream } from "../../queries/event-stream";
import { authedProcedure, router } from "../init";
import { limit, projectId, safeString, workItemRef } from "../schemas";

/** How often a streaming caller's credential is checked again: a revoked token or an ended session stops receiving within this. */
const CREDENTIAL_RECHECK_MS = 5_000;

export const eventsRouter = router({
  list: authedProcedure
    .input(z.object({
      workItemId: workItemRef.optional(),
      after: z.number().int().min(0).optional(),
      before: z.number().int().min(1).optional(),
      order: z.enum(["asc", "desc"]).default("asc"),
      limit: limit(500, 100),
      projectId: projectId.optional(),
    }).default({ limit: 100, order: "asc" }))
    .query(({ ctx, input }) => listEvents(ctx.db, ctx.caller, input)),

  /** SSE; a reconnect's Last-Event-ID arrives as `lastEventId` and wins over `after`. */
  stream: authedProcedure
    .input(z.object({
      after: z.number().int().min(0).optional(),
      workItemId: workItemRef.optional(),
      types: z.array(safeString().min(1).max(100)).min(1).max(50).optional(),
      lastEventId: safeString().regex(/^\d{1,15}$/, "lastEventId must be an event sequence").optional(),
      projectId: projectId.optional(),
    }).default({}))
    .subscription(async ({ ctx, input, signal }) => {
      const after = input.lastEventId !== undefined ? Number(input.lastEventId) : input.after;
      const { reauthenticate } = ctx;
      let checkedAt = performance.now();
      const authorize = async () => {
        if (!reauthenticate || performance.now() - checkedAt < CREDENTIAL_RECHECK_MS) return;
        if (!(await reauthenticate())) {
          const refusal = new WorkGraphError("UNAUTHENTICATED", "the token was revoked or the session has ended");
          throw new TRPCError({ code: "UNAUTHORIZED", message: refusal.message, cause: refusal });
        }
        checkedAt = performance.now();
      };
      const events = await openEventStream(ctx.instance, ctx.caller, { ...input, after }, signal, authorize);
      return (async function* () {
        for await (const event of events) yield tracked(String(event.sequence), event);
      })();
    }),
});
