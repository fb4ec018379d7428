import { publicProcedure, router } from "../init";

export const healthRouter = router({
  check: publicProcedure.query(async ({ ctx }) => {
    const [row] = await ctx.db.$queryRaw<{ now: Date }[]>`SELECT statement_timestamp() AS now`;
    return { ok: true as const, database: "ok" as const, now: row!.now.toISOString() };
  }),
});
