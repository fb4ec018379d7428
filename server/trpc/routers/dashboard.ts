import { inputs } from "@work-graph/contract";
import { activity } from "../../queries/activity";
import { summary, unroutableItems } from "../../queries/dashboard";
import { attentionInbox, itemNeighbourhood } from "../../queries/dashboard-views";
import { endedLastHour } from "../../queries/workers";
import { authedProcedure, router } from "../init";

export const dashboardRouter = router({
  summary: authedProcedure
    .input(inputs["dashboard.summary"])
    .query(({ ctx, input }) => summary(ctx.db, ctx.caller, input?.projectId)),
  /** Dashboard addition (read-only): ready items no agent could take, with the capabilities no agent has. */
  unroutable: authedProcedure
    .input(inputs["dashboard.unroutable"])
    .query(({ ctx, input }) => unroutableItems(ctx.db, ctx.caller, input)),
  /** Dashboard addition (read-only): leases ended in the last hour per outcome. */
  endedLastHour: authedProcedure.query(({ ctx }) => endedLastHour(ctx.db, ctx.caller)),
  /** Dashboard addition (read-only): attention requests with their item's title and stage; open oldest first, resolved newest first. */
  inbox: authedProcedure
    .input(inputs["dashboard.inbox"])
    .query(({ ctx, input }) => attentionInbox(ctx.db, ctx.caller, input)),
  /** Dashboard addition (read-only): ancestors, blockers, dependents and children of one item, with stages. */
  neighbourhood: authedProcedure
    .input(inputs["dashboard.neighbourhood"])
    .query(({ ctx, input }) => itemNeighbourhood(ctx.db, ctx.caller, input.id)),
  /** Dashboard addition (read-only): events per interval and wait percentiles over the last hour, day or week. */
  activity: authedProcedure
    .input(inputs["dashboard.activity"])
    .query(({ ctx, input }) => activity(ctx.db, input.range, ctx.caller)),
});
