import { z } from "zod";
import { createPersonalToken, disablePerson, enablePerson, listPeople, listPersonalTokens, revokePersonalToken } from "../../auth/people";
import { rolesProcedure, router } from "../init";
import { safeString, uuid } from "../schemas";

const admin = rolesProcedure();
const operator = rolesProcedure("operator");

export const peopleRouter = router({
  list: admin.query(({ ctx }) => listPeople(ctx.db)),
  disable: admin.input(z.object({ id: uuid })).mutation(({ ctx, input }) => disablePerson(ctx.db, input.id)),
  enable: admin.input(z.object({ id: uuid })).mutation(({ ctx, input }) => enablePerson(ctx.db, input.id)),
  /** The caller as the dashboard shows them: their person (null for a token), role and actor. */
  me: operator.query(({ ctx }) => ({ person: ctx.caller.person ?? null, role: ctx.caller.role, actor: ctx.caller.actor })),
  createToken: operator
    .input(z.object({ label: safeString().max(200).optional() }))
    .mutation(({ ctx, input }) => createPersonalToken(ctx.db, ctx.caller, input.label)),
  tokens: operator
    .input(z.object({ personId: uuid.optional() }).optional())
    .query(({ ctx, input }) => listPersonalTokens(ctx.db, ctx.caller, input?.personId)),
  revokeToken: operator.input(z.object({ id: uuid })).mutation(({ ctx, input }) => revokePersonalToken(ctx.db, ctx.caller, input.id)),
});
