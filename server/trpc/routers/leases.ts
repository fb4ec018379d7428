import { inputs } from "@work-graph/contract";
import { claimWaiting } from "../../operations/claim-wait";
import { decompose } from "../../operations/decompose";
import { cancel, release } from "../../operations/finish";
import { handBack } from "../../operations/hand-back";
import { addNote } from "../../operations/note";
import { renew } from "../../operations/renew";
import { revokeLease } from "../../operations/revoke";
import { activeLeases, getLease, leaseHistory, recentlyEndedLeases } from "../../queries/leases";
import { claimingWorker, assertActsForSelf } from "../identity";
import { authedProcedure, rolesProcedure, router } from "../init";
import { withKey } from "../input";

const agent = rolesProcedure("agent");

export const leasesRouter = router({
  claim: agent
    .input(inputs["leases.claim"])
    .mutation(({ ctx, input, signal }) => {
      const { workerId: requested, waitSeconds: wait, ...rest } = withKey(input);
      return claimWaiting(ctx.db, ctx.caller, claimingWorker(ctx.caller, requested), rest, wait, signal);
    }),

  renew: agent
    .input(inputs["leases.renew"])
    .mutation(({ ctx, input }) => {
      assertActsForSelf(ctx.caller, input.workerId);
      return renew(ctx.db, ctx.caller, input);
    }),

  release: agent
    .input(inputs["leases.release"])
    .mutation(({ ctx, input }) => {
      assertActsForSelf(ctx.caller, input.workerId);
      return release(ctx.db, ctx.caller, input);
    }),

  cancel: agent
    .input(inputs["leases.cancel"])
    .mutation(({ ctx, input }) => {
      assertActsForSelf(ctx.caller, input.workerId);
      return cancel(ctx.db, ctx.caller, input);
    }),

  handBack: agent
    .input(inputs["leases.handBack"])
    .mutation(({ ctx, input }) => {
      assertActsForSelf(ctx.caller, input.workerId);
      return handBack(ctx.db, ctx.caller, input);
    }),

  note: agent
    .input(inputs["leases.note"])
    .mutation(({ ctx, input }) => {
      assertActsForSelf(ctx.caller, input.workerId);
      return addNote(ctx.db, ctx.caller, withKey(input));
    }),

  decompose: agent
    .input(inputs["leases.decompose"])
    .mutation(({ ctx, input }) => {
      assertActsForSelf(ctx.caller, input.workerId);
      return decompose(ctx.db, ctx.caller, withKey(input));
    }),

  /** Operator control (v2): end someone's live lease now, with a reason. */
  revoke: rolesProcedure("operator")
    .input(inputs["leases.revoke"])
    .mutation(({ ctx, input }) => revokeLease(ctx.db, ctx.caller, input)),

  get: authedProcedure.input(inputs["leases.get"]).query(({ ctx, input }) => getLease(ctx.db, ctx.caller, input.leaseId)),

  active: authedProcedure
    .input(inputs["leases.active"])
    .query(({ ctx, input }) => activeLeases(ctx.db, ctx.caller, input)),

  /** Dashboard: most recently ended leases (not in API.md's table; an addition). */
  recent: authedProcedure
    .input(inputs["leases.recent"])
    .query(({ ctx, input }) => recentlyEndedLeases(ctx.db, ctx.caller, input.limit, input.workerId)),

  history: authedProcedure.input(inputs["leases.history"]).query(({ ctx, input }) => leaseHistory(ctx.db, ctx.caller, input.workItemId)),
});
