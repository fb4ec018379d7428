import { tracked, TRPCError } from "@trpc/server";
import { inputs } from "@work-graph/contract";
import { WorkGraphError } from "../../errors";
import { listEvents } from "../../queries/events";
import { openEventStream } from "../../queries/event-stream";
import { authedProcedure, router } from "../init";

/** How often a streaming caller's credential is checked again: a revoked token or an ended session stops receiving within this. */
const CREDENTIAL_RECHECK_MS = 5_000;

export const eventsRouter = router({
  list: authedProcedure
    .input(inputs["events.list"])
    .query(({ ctx, input }) => listEvents(ctx.db, ctx.caller, input)),

  /** SSE; a reconnect's Last-Event-ID arrives as `lastEventId` and wins over `after`. */
  stream: authedProcedure
    .input(inputs["events.stream"])
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
      const events = await openEventStream(ctx.db, ctx.caller, { ...input, after }, signal, authorize);
      return (async function* () {
        for await (const event of events) yield tracked(String(event.sequence), event);
      })();
    }),
});
