import type { Db } from "../db";
import { STAGES, type Stage } from "@work-graph/contract";
import { inProjects } from "../domain/scope";
import type { WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toWorkItem } from "../domain/views";
import { countItemsByStage, countLeasesAndAttention, countUnroutable, selectUnroutable } from "../sql/dashboard";

export interface Summary {
  stages: Record<Stage, number>;
  activeLeases: number;
  openAttention: number;
  expiringWithin60s: number;
  /** Ready items no unrevoked agent token could take (server/domain/unroutable.ts). */
  unroutable: number;
  /** The database clock, so a dashboard can correct its countdowns for the browser's clock. */
  now: string;
}

/** Counts over the projects the caller may see (rule 12 (projects scope tokens)), narrowed to `projectId` when given. */
export async function summary(db: Db, caller: Pick<Caller, "projects">, projectId?: string): Promise<Summary> {
  const projects = inProjects(caller, projectId);
  const [counts, totals, unroutable] = await Promise.all([
    countItemsByStage(db, projects), countLeasesAndAttention(db, projects), countUnroutable(db, projects),
  ]);
  const stages = Object.fromEntries(STAGES.map((stage) => [stage, 0])) as Record<Stage, number>;
  for (const row of counts) stages[row.stage] += Number(row.n);
  return {
    stages,
    activeLeases: totals.activeLeases,
    openAttention: totals.openAttention,
    expiringWithin60s: totals.expiring,
    unroutable,
    now: totals.now.toISOString(),
  };
}

/** dashboard.unroutable: ready items no agent could take, in queue order, each with the capabilities no agent has. */
export async function unroutableItems(
  db: Db,
  caller: Pick<Caller, "projects">,
  input: { projectId?: string; limit: number },
): Promise<{ items: { item: WorkItem; missing: string[] }[]; total: number }> {
  const projects = inProjects(caller, input.projectId);
  const [rows, total] = await Promise.all([selectUnroutable(db, projects, input.limit), countUnroutable(db, projects)]);
  return { items: rows.map(({ missing, ...row }) => ({ item: toWorkItem(row), missing })), total };
}
