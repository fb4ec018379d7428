import { tracked, TRPCError } from "@trpc/server";
import { z } from "zod";
import { createToken, listTokens, revokeToken } from "../../auth/tokens";
import { ROLES } from "../../domain/contract";
import { WorkGraphError } from "../../errors";
import { activity } from "../../queries/activity";
import { summary } from "../../queries/dashboard";
import { attentionInbox, itemNeighbourhood } from "../../queries/dashboard-views";
import { listEvents } from "../../queries/events";
import { openEventStream } from "../../queries/event-stream";
import { listNotes } from "../../queries/notes";
import { endedLastHour } from "../../queries/workers";
import { authedProcedure, rolesProcedure, router } from "../init";
import { limit, uuid, workerId, workItemRef, safeString } from "../schemas";

export const notesRouter = router({
  list: authedProcedure
    .input(z.object({ workItemId: workItemRef, limit: limit(200, 50), cursor: safeString().max(400).optional(), order: z.enum(["asc", "desc"]).default("asc") }))
    .query(({ ctx, input }) => listNotes(ctx.db, input)),
});

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
    }).default({ limit: 100, order: "asc" }))
    .query(({ ctx, input }) => listEvents(ctx.db, input)),

  /** SSE; a reconnect's Last-Event-ID arrives as `lastEventId` and wins over `after`. */
  stream: authedProcedure
    .input(z.object({
      after: z.number().int().min(0).optional(),
      workItemId: workItemRef.optional(),
      types: z.array(safeString().min(1).max(100)).min(1).max(50).optional(),
      lastEventId: safeString().regex(/^\d{1,15}$/, "lastEventId must be an event sequence").optional(),
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
      const events = await openEventStream(ctx.db, { ...input, after }, signal, authorize);
      return (async function* () {
        for await (const event of events) yield tracked(String(event.sequence), event);
      })();
    }),
});

export const dashboardRouter = router({
  summary: authedProcedure.query(({ ctx }) => summary(ctx.db)),
  /** Dashboard addition (read-only): leases ended in the last hour per outcome. */
  endedLastHour: authedProcedure.query(({ ctx }) => endedLastHour(ctx.db)),
  /** Dashboard addition (read-only): attention requests with their item's title and stage; open oldest first, resolved newest first. */
  inbox: authedProcedure
    .input(z.object({ status: z.enum(["open", "resolved"]), limit: limit(200, 100) }))
    .query(({ ctx, input }) => attentionInbox(ctx.db, input)),
  /** Dashboard addition (read-only): ancestors, blockers, dependents and children of one item, with stages. */
  neighbourhood: authedProcedure
    .input(z.object({ id: workItemRef }))
    .query(({ ctx, input }) => itemNeighbourhood(ctx.db, input.id)),
  /** Dashboard addition (read-only): events per interval and wait percentiles over the last hour, day or week. */
  activity: authedProcedure
    .input(z.object({ range: z.enum(["hour", "day", "week"]).default("day") }).default({ range: "day" }))
    .query(({ ctx, input }) => activity(ctx.db, input.range)),
});

const admin = rolesProcedure();

export const tokensRouter = router({
  create: admin
    .input(z.object({ role: z.enum(ROLES), workerId: workerId.optional(), label: safeString().max(200).optional() }))
    .mutation(({ ctx, input }) => createToken(ctx.db, input)),
  list: admin.query(({ ctx }) => listTokens(ctx.db)),
  revoke: admin.input(z.object({ id: uuid })).mutation(({ ctx, input }) => revokeToken(ctx.db, input.id)),
});
