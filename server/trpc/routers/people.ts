import { inputs } from "@work-graph/contract";
import { createPersonalToken, disablePerson, enablePerson, listPeople, listPersonalTokens, revokePersonalToken } from "../../auth/people";
import { rolesProcedure, router } from "../init";

const admin = rolesProcedure();
const operator = rolesProcedure("operator");

export const peopleRouter = router({
  list: admin.query(({ ctx }) => listPeople(ctx.db)),
  disable: admin.input(inputs["people.disable"]).mutation(({ ctx, input }) => disablePerson(ctx.db, input.id)),
  enable: admin.input(inputs["people.enable"]).mutation(({ ctx, input }) => enablePerson(ctx.db, input.id)),
  /** The caller as the dashboard shows them: their person (null for a token), role and actor. */
  me: operator.query(({ ctx }) => ({ person: ctx.caller.person ?? null, role: ctx.caller.role, actor: ctx.caller.actor })),
  createToken: operator
    .input(inputs["people.createToken"])
    .mutation(({ ctx, input }) => createPersonalToken(ctx.db, ctx.caller, input.label)),
  tokens: operator
    .input(inputs["people.tokens"])
    .query(({ ctx, input }) => listPersonalTokens(ctx.db, ctx.caller, input?.personId)),
  revokeToken: operator.input(inputs["people.revokeToken"]).mutation(({ ctx, input }) => revokePersonalToken(ctx.db, ctx.caller, input.id)),
});
