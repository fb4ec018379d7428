import { z } from "zod";
import { activity } from "../../queries/activity";
import { summary, unroutableItems } from "../../queries/dashboard";
import { attentionInbox, itemNeighbourhood } from "../../queries/dashboard-views";
import { endedLastHour } from "../../queries/workers";
import { authedProcedure, router } from "../init";
import { limit, projectId, workItemRef } from "../schemas";

export const dashboardRouter = router({
  summary: authedProcedure
    .input(z.object({ projectId: projectId.optional() }).optional())
    .query(({ ctx, input }) => summary(ctx.db, ctx.caller, input?.projectId)),
  /** Dashboard addition (read-only): ready items no agent could take, with the capabilities no agent has. */
  unroutable: authedProcedure
    .input(z.object({ projectId: projectId.optional(), limit: limit(200, 50) }).default({ limit: 50 }))
    .query(({ ctx, input }) => unroutableItems(ctx.db, ctx.caller, input)),
  /** Dashboard addition (read-only): leases ended in the last hour per outcome. */
  endedLastHour: authedProcedure.query(({ ctx }) => endedLastHour(ctx.db, ctx.caller)),
  /** Dashboard addition (read-only): attention requests with their item's title and stage; open oldest first, resolved newest first. */
  inbox: authedProcedure
    .input(z.object({ status: z.enum(["open", "resolved"]), limit: limit(200, 100), projectId: projectId.optional() }))
    .query(({ ctx, input }) => attentionInbox(ctx.db, ctx.caller, input)),
  /** Dashboard addition (read-only): ancestors, blockers, dependents and children of one item, with stages. */
  neighbourhood: authedProcedure
    .input(z.object({ id: workItemRef }))
    .query(({ ctx, input }) => itemNeighbourhood(ctx.db, ctx.caller, input.id)),
  /** Dashboard addition (read-only): events per interval and wait percentiles over the last hour, day or week. */
  activity: authedProcedure
    .input(z.object({ range: z.enum(["hour", "day", "week"]).default("day") }).default({ range: "day" }))
    .query(({ ctx, input }) => activity(ctx.db, input.range, ctx.caller)),
});
