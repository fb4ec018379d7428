import type { Db } from "../db";
import { STAGES, type Stage } from "../domain/types";
import { countItemsByStage, countLeasesAndAttention } from "../sql/dashboard";

export interface Summary {
  stages: Record<Stage, number>;
  activeLeases: number;
  openAttention: number;
  expiringWithin60s: number;
  /** The database clock, so a dashboard can correct its countdowns for the browser's clock. */
  now: string;
}

export async function summary(db: Db): Promise<Summary> {
  const [counts, totals] = await Promise.all([countItemsByStage(db), countLeasesAndAttention(db)]);
  const stages = Object.fromEntries(STAGES.map((stage) => [stage, 0])) as Record<Stage, number>;
  for (const row of counts) stages[row.stage] += Number(row.n);
  return {
    stages,
    activeLeases: totals.activeLeases,
    openAttention: totals.openAttention,
    expiringWithin60s: totals.expiring,
    now: totals.now.toISOString(),
  };
}
