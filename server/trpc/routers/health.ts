import { databaseNow } from "../../sql/health";
import { publicProcedure, router } from "../init";

export const healthRouter = router({
  check: publicProcedure.query(async ({ ctx }) => {
    return { ok: true as const, database: "ok" as const, now: (await databaseNow(ctx.db)).toISOString() };
  }),
});
