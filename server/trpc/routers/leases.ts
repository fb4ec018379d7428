import { z } from "zod";
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
import { capabilities, childSpec, durationSeconds, epoch, idempotencyKey, leaseRef, limit, projectId, text, uuid, waitSeconds, workerId, workItemRef, withKey, safeString } from "../schemas";

const agent = rolesProcedure("agent");

export const leasesRouter = router({
  claim: agent
    .input(z.object({
      workItemId: workItemRef.optional(),
      parentId: workItemRef.optional(),
      durationSeconds: durationSeconds.default(900),
      waitSeconds: waitSeconds.default(0),
      workerId: workerId.optional(),
      idempotencyKey: idempotencyKey.optional(),
      key: idempotencyKey.optional(),
      projectId: projectId.optional(),
      capabilities: capabilities.optional(),
    }).default({ durationSeconds: 900, waitSeconds: 0 }))
    .mutation(({ ctx, input, signal }) => {
      const { workerId: requested, waitSeconds: wait, ...rest } = withKey(input);
      return claimWaiting(ctx.instance, ctx.caller, claimingWorker(ctx.caller, requested), rest, wait, signal);
    }),

  renew: agent
    .input(z.object({ ...leaseRef, durationSeconds: durationSeconds.default(900) }))
    .mutation(({ ctx, input }) => {
      assertActsForSelf(ctx.caller, input.workerId);
      return renew(ctx.db, ctx.caller, input);
    }),

  release: agent
    .input(z.object({ ...leaseRef, evidence: text("evidence", 100_000), links: z.array(safeString().min(1).max(2_000)).max(100).optional() }))
    .mutation(({ ctx, input }) => {
      assertActsForSelf(ctx.caller, input.workerId);
      return release(ctx.db, ctx.caller, input);
    }),

  cancel: agent
    .input(z.object({ ...leaseRef, reason: text("reason", 10_000) }))
    .mutation(({ ctx, input }) => {
      assertActsForSelf(ctx.caller, input.workerId);
      return cancel(ctx.db, ctx.caller, input);
    }),

  handBack: agent
    .input(z.object({ ...leaseRef, reason: text("reason", 10_000), retryAfterSeconds: z.number().int().min(0).max(86_400).optional() }))
    .mutation(({ ctx, input }) => {
      assertActsForSelf(ctx.caller, input.workerId);
      return handBack(ctx.db, ctx.caller, input);
    }),

  note: agent
    .input(z.object({ ...leaseRef, content: text("content", 100_000), idempotencyKey: idempotencyKey.optional(), key: idempotencyKey.optional() }))
    .mutation(({ ctx, input }) => {
      assertActsForSelf(ctx.caller, input.workerId);
      return addNote(ctx.db, ctx.caller, withKey(input));
    }),

  decompose: agent
    .input(z.object({
      ...leaseRef,
      children: z.array(childSpec).min(1).max(100),
      claimChildId: workItemRef.optional(),
      durationSeconds: durationSeconds.optional(),
      idempotencyKey: idempotencyKey.optional(),
      key: idempotencyKey.optional(),
    }))
    .mutation(({ ctx, input }) => {
      assertActsForSelf(ctx.caller, input.workerId);
      return decompose(ctx.db, ctx.caller, withKey(input));
    }),

  /** Operator control (v2): end someone's live lease now, with a reason. */
  revoke: rolesProcedure("operator")
    .input(z.object({ leaseId: uuid, epoch, reason: text("reason", 10_000) }))
    .mutation(({ ctx, input }) => revokeLease(ctx.db, ctx.caller, input)),

  get: authedProcedure.input(z.object({ leaseId: uuid })).query(({ ctx, input }) => getLease(ctx.db, ctx.caller, input.leaseId)),

  active: authedProcedure
    .input(z.object({ workerId: workerId.optional(), limit: limit(500, 200), after: uuid.optional(), projectId: projectId.optional() }).default({ limit: 200 }))
    .query(({ ctx, input }) => activeLeases(ctx.db, ctx.caller, input)),

  /** Dashboard: most recently ended leases (not in API.md's table; an addition). */
  recent: authedProcedure
    .input(z.object({ workerId: workerId.optional(), limit: limit(200, 50) }).default({ limit: 50 }))
    .query(({ ctx, input }) => recentlyEndedLeases(ctx.db, ctx.caller, input.limit, input.workerId)),

  history: authedProcedure.input(z.object({ workItemId: workItemRef })).query(({ ctx, input }) => leaseHistory(ctx.db, ctx.caller, input.workItemId)),
});
