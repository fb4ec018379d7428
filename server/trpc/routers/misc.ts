import { z } from "zod";
import { createToken, listTokens, revokeToken } from "../../auth/tokens";
import { summary } from "../../queries/dashboard";
import { attentionInbox, itemNeighbourhood } from "../../queries/dashboard-views";
import { listEvents } from "../../queries/events";
import { listNotes } from "../../queries/notes";
import { endedLastHour } from "../../queries/workers";
import { authedProcedure, rolesProcedure, router } from "../init";
import { limit, uuid, workerId, workItemRef, safeString } from "../schemas";

export const notesRouter = router({
  list: authedProcedure
    .input(z.object({ workItemId: workItemRef, limit: limit(200, 50), cursor: safeString().max(400).optional(), order: z.enum(["asc", "desc"]).default("asc") }))
    .query(({ ctx, input }) => listNotes(ctx.db, input)),
});

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
});

const admin = rolesProcedure();

export const tokensRouter = router({
  create: admin
    .input(z.object({ role: z.enum(["agent", "operator", "admin"]), workerId: workerId.optional(), label: safeString().max(200).optional() }))
    .mutation(({ ctx, input }) => createToken(ctx.db, input)),
  list: admin.query(({ ctx }) => listTokens(ctx.db)),
  revoke: admin.input(z.object({ id: uuid })).mutation(({ ctx, input }) => revokeToken(ctx.db, input.id)),
});
