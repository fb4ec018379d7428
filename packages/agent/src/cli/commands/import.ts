/** `work-graph import FILE`: a plan file (JSON, YAML, task-master tasks.json, Markdown) through workItems.import. */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { retryUnanswered } from "../../sdk/retry";
import { WorkGraphError } from "../../sdk/errors";
import { action, newKey, UsageError, withProjectOption, type Sink } from "../context";
import { plural } from "../format";

export function importCommands(program: Command, sink: Sink) {
  withProjectOption(program.command("import"), "import into this project")
    .description("import a plan, all or nothing: JSON, YAML, a task-master tasks.json or a Markdown list (operator); safe to re-run")
    .usage("<file> [--project P] [--dry-run]")
    .argument("<file>")
    .option("--dry-run", "check the plan and show what would be created; write nothing")
    .action(action(sink, async (context, options: { project?: string; dryRun?: boolean }, file: string) => {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (error) {
        throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      // The parsers (remark, yaml) load only for this command: every other command starts without them.
      const { parsePlan, planTree, PlanFileError } = await import("../../plans/parse");
      let plan;
      try {
        plan = parsePlan(file, text);
      } catch (error) {
        if (error instanceof PlanFileError) throw new UsageError(`${file}: ${error.message}`);
        throw error;
      }
      const dryRun = options.dryRun ?? false;
      const key = newKey();
      const result = await retryUnanswered(() => context.client().workItems.import.mutate({
        projectId: options.project ?? plan.projectId ?? context.project,
        items: plan.items,
        dryRun,
        // A dry run writes nothing: a replay just checks again.
        ...(dryRun ? {} : { idempotencyKey: key }),
      })).catch((error: unknown) => {
        if (!(error instanceof WorkGraphError) || typeof error.detail.ref !== "string") throw error;
        const ref = error.detail.ref;
        const item = plan.items.find((candidate) => candidate.ref === ref);
        const where = [plan.sources[ref], item ? JSON.stringify(item.title) : undefined].filter(Boolean).join(", ");
        throw new WorkGraphError(error.reason, `${error.message} (${file}${where ? `: ${where}` : ""})`, { code: error.code, detail: error.detail, httpStatus: error.httpStatus });
      });
      const lines = planTree(plan.items, result);
      const width = Math.max(0, ...lines.map((line) => line.id.length));
      const human = [
        `${dryRun ? "Dry run: would create" : "Created"} ${plural(result.created.length, "item")}${result.existing.length ? `; ${result.existing.length} existed already` : ""} (${plan.format}).`,
        ...lines.map((line) => `${"  ".repeat(line.depth)}${line.id.padEnd(width)}  ${line.title}${line.existing ? "  (existing)" : ""}`),
      ].join("\n");
      return { data: result, human };
    }));
}
