import { z } from "zod";
import { createToken, listTokens, revokeToken } from "../../auth/tokens";
import { activity } from "../../queries/activity";
import { summary } from "../../queries/dashboard";
import { attentionInbox, itemNeighbourhood } from "../../queries/dashboard-views";
import { listEvents } from "../../queries/events";
import { listNotes } from "../../queries/notes";
import { authedProcedure, rolesProcedure, router } from "../init";
import { limit, uuid, workerId, workItemRef } from "../schemas";

export const notesRouter = router({
  list: authedProcedure
    .input(z.object({ workItemId: workItemRef, limit: limit(200, 50), cursor: z.string().max(400).optional() }))
    .query(({ ctx, input }) => listNotes(ctx.db, input)),
});

export const eventsRouter = router({
  list: authedProcedure
    .input(z.object({ workItemId: workItemRef.optional(), after: z.number().int().min(0).optional(), limit: limit(500, 100) }).default({ limit: 100 }))
    .query(({ ctx, input }) => listEvents(ctx.db, input)),
});

export const dashboardRouter = router({
  summary: authedProcedure.query(({ ctx }) => summary(ctx.db)),
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
    .input(z.object({ role: z.enum(["agent", "operator", "admin"]), workerId: workerId.optional(), label: z.string().max(200).optional() }))
    .mutation(({ ctx, input }) => createToken(ctx.db, input)),
  list: admin.query(({ ctx }) => listTokens(ctx.db)),
  revoke: admin.input(z.object({ id: uuid })).mutation(({ ctx, input }) => revokeToken(ctx.db, input.id)),
});
