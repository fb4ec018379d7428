/** The queue policy's settings: concurrency limits per key (operator) and projects (admin creates them). */
import type { Command } from "commander";
import { action, integer, type Sink } from "../context";
import { plural, table } from "../format";

export function policyCommands(program: Command, sink: Sink) {
  const limits = program.command("limits").description("concurrency limits: at most N live leases on items with a key");

  limits.command("list")
    .description("every key with a limit, its live leases and when it was set")
    .action(action(sink, async (context) => {
      const list = await context.client().limits.list.query({});
      const human = list.length === 0
        ? "No limits: every concurrency key is unlimited."
        : table(list.map((limit) => [limit.key, String(limit.maxLeases), String(limit.liveLeases), limit.updatedAt]), ["key", "limit", "live", "updated"]);
      return { data: list, human };
    }));

  limits.command("set")
    .description("at most N live leases on items with concurrency key KEY (operator; 0 pauses the key; lowering ends no lease)")
    .usage("<key> <n>")
    .argument("<key>")
    .argument("<n>", "the most live leases (0-10000)", integer)
    .action(action(sink, async (context, _options: object, key: string, maxLeases: number) => {
      const limit = await context.client().limits.set.mutate({ key, maxLeases });
      return { data: limit, human: `${key}: at most ${plural(limit.maxLeases, "live lease")} (${limit.liveLeases} live now).` };
    }));

  limits.command("delete")
    .description("remove KEY's limit: it is unlimited again (operator)")
    .usage("<key>")
    .argument("<key>")
    .action(action(sink, async (context, _options: object, key: string) => {
      const result = await context.client().limits.delete.mutate({ key });
      return { data: result, human: `${result.key} is unlimited again.` };
    }));

  const projects = program.command("projects").description("projects: separate queues; tokens may be scoped to some");

  projects.command("list")
    .description("the projects this token may see")
    .action(action(sink, async (context) => {
      const list = await context.client().projects.list.query({});
      return { data: list, human: table(list.map((project) => [project.id, project.name, project.createdAt]), ["id", "name", "created"]) };
    }));

  projects.command("create")
    .description("create a project (admin)")
    .usage("<id> <name>")
    .argument("<id>", "[a-z0-9][a-z0-9-]{0,49}")
    .argument("<name>")
    .action(action(sink, async (context, _options: object, id: string, name: string) => {
      const project = await context.client().projects.create.mutate({ id, name });
      return { data: project, human: `Created project ${project.id} (${project.name}).` };
    }));
}
