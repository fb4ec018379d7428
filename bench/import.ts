/**
 * workItems.import (docs/api.md "Import"), service layer: a plan of `items` items (20 epics,
 * the rest their tasks) with `dependencies` edges (between tasks, earlier to later, plus some on
 * items that exist already), on a database already holding a graph. Measured: a real import
 * (fresh refs each run), the same plan as a dry run, and a re-run that finds every item by
 * externalId and creates nothing.
 */
import { createDb } from "../server/db";
import type { Caller } from "../server/domain/types";
import type { ImportItem } from "@work-graph/contract";
import { importWorkItems } from "../server/operations/import";
import { insertReady, log, median } from "./support";

export interface ImportResult {
  items: number;
  dependencies: number;
  runs: number;
  importMs: number[];
  dryRunMs: number;
  rerunMs: number;
}

const OPERATOR: Caller = { tokenId: "bench-operator", role: "operator", workerId: null, actor: "bench-operator", projects: [], capabilities: [] };

/** A plan with exactly `items` items and `dependencies` edges, acyclic (edges point from later to earlier tasks). */
export function benchPlan(tag: string, items: number, dependencies: number, existing: string[]): ImportItem[] {
  const epics = 20;
  const plan: ImportItem[] = Array.from({ length: epics }, (_, n) => ({ ref: `epic-${n}`, title: `Epic ${n}`, externalId: `${tag}:epic-${n}` }));
  for (let n = 0; plan.length < items; n++) {
    plan.push({ ref: `task-${n}`, title: `Task ${n} of the plan`, parent: `epic-${n % epics}`, externalId: `${tag}:task-${n}`, dependsOn: [] });
  }
  const tasks = plan.slice(epics);
  let seed = 7;
  const random = (below: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % below);
  for (let edges = 0; edges < dependencies; ) {
    const dependent = tasks[1 + random(tasks.length - 1)]!;
    const index = tasks.indexOf(dependent);
    const blocker = edges % 10 === 0 ? existing[random(existing.length)]! : tasks[random(index)]!.ref;
    if (dependent.dependsOn!.includes(blocker)) continue;
    dependent.dependsOn!.push(blocker);
    edges++;
  }
  return plan;
}

export async function importBenchmark(url: string, options: { items: number; dependencies: number; runs: number }): Promise<ImportResult> {
  await insertReady(url, "existing-", 10_000);
  const existing = Array.from({ length: 100 }, (_, n) => `existing-${n * 97 + 1}`);
  const db = createDb(url, { poolSize: 2 });
  try {
    const time = async (plan: ImportItem[], dryRun = false) => {
      const started = performance.now();
      const result = await importWorkItems(db, OPERATOR, { items: plan, dryRun });
      return { ms: performance.now() - started, created: result.created.length, existing: result.existing.length };
    };
    const importMs: number[] = [];
    for (let run = 0; run < options.runs; run++) {
      const { ms, created } = await time(benchPlan(`run-${run}`, options.items, options.dependencies, existing));
      if (created !== options.items) throw new Error(`import created ${created} of ${options.items}`);
      importMs.push(ms);
    }
    const dry = await time(benchPlan("dry", options.items, options.dependencies, existing), true);
    const rerun = await time(benchPlan("run-0", options.items, options.dependencies, existing));
    if (rerun.created !== 0 || rerun.existing !== options.items) throw new Error("the re-run created items");
    log(`import of ${options.items} items, ${options.dependencies} dependencies: median ${median(importMs).toFixed(0)} ms (${importMs.map((ms) => ms.toFixed(0)).join(", ")}); dry run ${dry.ms.toFixed(0)} ms; re-run ${rerun.ms.toFixed(0)} ms`);
    return { ...options, importMs, dryRunMs: dry.ms, rerunMs: rerun.ms };
  } finally {
    await db.$disconnect();
  }
}

export function renderImport(result: ImportResult | null): string[] {
  if (!result) return [];
  return [
    "",
    `### Import (${result.items.toLocaleString("en")} items, ${result.dependencies.toLocaleString("en")} dependencies, service layer)`,
    "",
    `One workItems.import on a database holding 10,000 items: median ${median(result.importMs).toFixed(0)} ms over ${result.runs} runs`
      + ` (${result.importMs.map((ms) => ms.toFixed(0)).join(", ")} ms); the same plan as a dry run ${result.dryRunMs.toFixed(0)} ms;`
      + ` a re-run that finds every item by externalId ${result.rerunMs.toFixed(0)} ms.`,
  ];
}
