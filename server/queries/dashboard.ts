import type { Db } from "../db";
import { STAGES, type Stage } from "../domain/types";
import { STAGE_SQL } from "../domain/readiness";

export interface Summary {
  stages: Record<Stage, number>;
  activeLeases: number;
  openAttention: number;
  expiringWithin60s: number;
  /** The database clock, so a dashboard can correct its countdowns for the browser's clock. */
  now: string;
}

export async function summary(db: Db): Promise<Summary> {
  const [counts, [totals]] = await Promise.all([
    // One pass over the items (STAGE_SQL gives a released or cancelled item its status).
    db.$queryRaw<{ stage: Stage; n: number }[]>`
      SELECT ${STAGE_SQL} AS stage, count(*)::int AS n FROM work_items w GROUP BY 1`,
    db.$queryRaw<{ activeLeases: number; expiring: number; openAttention: number; now: Date }[]>`
      SELECT count(*) FILTER (WHERE lease_expires_at > statement_timestamp())::int AS "activeLeases",
             count(*) FILTER (WHERE lease_expires_at > statement_timestamp()
                                AND lease_expires_at <= statement_timestamp() + interval '60 seconds')::int AS expiring,
             (SELECT count(*)::int FROM attention_requests WHERE status = 'open') AS "openAttention",
             statement_timestamp() AS now
        FROM work_items WHERE lease_expires_at IS NOT NULL`,
  ]);
  const stages = Object.fromEntries(STAGES.map((stage) => [stage, 0])) as Record<Stage, number>;
  for (const row of counts) stages[row.stage] += Number(row.n);
  return {
    stages,
    activeLeases: totals!.activeLeases,
    openAttention: totals!.openAttention,
    expiringWithin60s: totals!.expiring,
    now: totals!.now.toISOString(),
  };
}
