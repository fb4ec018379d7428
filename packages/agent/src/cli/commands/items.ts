/** Commands on work items: the queue, one item, creating and linking items, the event log. */
import type { Command } from "commander";
import type { UpdateWorkItemInput } from "../../sdk/client";
import { retryUnanswered } from "../../sdk/retry";
import {
  action, collect, collectNames, integer, isoTime, newKey, required, UsageError, withCapabilityOption, withProjectOption, type Sink,
} from "../context";
import { describeItem, oneLine, stageOf, table } from "../format";

export function itemCommands(program: Command, sink: Sink) {
  withCapabilityOption(withProjectOption(program.command("queue"), "only this project's items"))
    .description("ready items in the order a next claim takes them (with these capabilities, in this project)")
    .usage("[--limit N] [--worker-id W] [--project P] [--capability C]…")
    .option("--limit <N>", "how many", integer)
    .option("--worker-id <W>", "the queue as worker W sees it")
    .action(action(sink, async (context, options: { limit?: number; workerId?: string; project?: string; capability?: string[] }) => {
      const items = await context.client().workItems.queue.query({
        limit: options.limit, workerId: options.workerId, projectId: options.project ?? context.project, capabilities: options.capability,
      });
      const human = items.length === 0
        ? "Nothing is ready."
        : table(items.map((item, index) => [
          String(index + 1), item.id, String(item.priority), item.projectId, item.requires.join(",") || "-", item.concurrencyKey ?? "-",
          item.previousWorkerId ?? "-", oneLine(item.title, 60),
        ]), ["#", "id", "priority", "project", "requires", "key", "previous worker", "title"]);
      return { data: items, human };
    }));

  program.command("show")
    .description("a work item: stage, lease, dependencies, notes")
    .usage("<item>")
    .argument("<item>")
    .action(action(sink, async (context, _options: object, id: string) => {
      const client = context.client();
      const [item, notes, attention] = await Promise.all([
        client.workItems.get.query({ id }),
        client.notes.list.query({ workItemId: id, limit: 50 }),
        client.attention.list.query({ workItemId: id, status: "open" }),
      ]);
      const human = [
        ...describeItem(item),
        ...(attention.items.length
          ? ["", "Open attention requests:", ...attention.items.map((request) => `  ${request.id} [${request.kind}]${request.blocking ? " blocking" : ""} ${request.question}`)]
          : []),
        ...(notes.items.length
          ? ["", "Notes:", ...notes.items.map((note) => `  ${note.createdAt} ${note.workerId} (epoch ${note.epoch}): ${oneLine(note.content, 100)}`)]
          : []),
      ].join("\n");
      return { data: { workItem: item, notes: notes.items, openAttention: attention.items }, human };
    }));

  withProjectOption(program.command("events"), "only this project's events")
    .description("the event log (--follow keeps tailing)")
    .usage("[--item X] [--project P] [--after N] [--limit N] [--follow]")
    .option("--item <X>", "only this item's events")
    .option("--after <N>", "events after this sequence number", integer)
    .option("--limit <N>", "how many", integer)
    .option("--follow", "keep printing new events until interrupted (JSON lines with --json)")
    .action(action(sink, async (context, options: { item?: string; after?: number; limit?: number; follow?: boolean; project?: string }) => {
      const client = context.client();
      // A named item's events are wherever it is: the default project narrows only the full log.
      const projectId = options.project ?? (options.item ? undefined : context.project);
      let after = options.after;
      const format = (event: Awaited<ReturnType<typeof client.events.list.query>>["items"][number]) =>
        `${String(event.sequence).padStart(6)}  ${event.createdAt}  ${event.type.padEnd(26)} ${event.workItemId}  ${event.actor}${event.epoch !== null ? `  epoch ${event.epoch}` : ""}  ${oneLine(JSON.stringify(event.data), 100)}`;
      if (!options.follow) {
        const page = await client.events.list.query({ workItemId: options.item, projectId, after, limit: options.limit });
        return { data: page, human: page.items.length === 0 ? "No events." : page.items.map(format).join("\n") };
      }
      let stopped = false;
      process.once("SIGINT", () => (stopped = true));
      while (!stopped) {
        const page = await client.events.list.query({ workItemId: options.item, projectId, after, limit: options.limit ?? 500 });
        for (const event of page.items) process.stdout.write(`${context.json ? JSON.stringify(event) : format(event)}\n`);
        if (page.nextCursor) after = Number(page.nextCursor);
        if (page.items.length === 0) await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      return { data: undefined, human: "" };
    }));

  withProjectOption(program.command("create"), "create it in this project (a child is always in its parent's)")
    .description("create a work item")
    .usage("--title T [--id ID] [--parent P] [--depends-on D]… [--priority N] [--description TEXT] [--project P] [--requires C]… [--concurrency-key K] [--not-before TIME | --delay S] [--external-id X]")
    .option("--title <T>", "its title")
    .option("--id <ID>", "its id (generated when omitted)")
    .option("--parent <P>", "make it a child of P")
    .option("--depends-on <D>", "an item it waits for (repeatable)", collect)
    .option("--priority <N>", "higher first (default 0)", integer)
    .option("--description <TEXT>", "what to do")
    .option("--requires <C>", "a capability a worker needs to claim it (repeatable or comma-separated)", collectNames)
    .option("--concurrency-key <K>", "a key whose limit (work-graph limits set) caps live leases")
    .option("--not-before <TIME>", "not claimable before this time (ISO-8601 with offset)", isoTime)
    .option("--delay <S>", "not claimable for S seconds from now (server clock)", integer)
    .option("--external-id <X>", "its id in another system (unique per project)")
    .option("--key <K>", "idempotency key")
    .action(action(sink, async (context, options: {
      title?: string; id?: string; parent?: string; dependsOn?: string[]; priority?: number; description?: string; key?: string;
      project?: string; requires?: string[]; concurrencyKey?: string; notBefore?: string; delay?: number; externalId?: string;
    }) => {
      const title = required(options.title, "--title");
      if (options.notBefore !== undefined && options.delay !== undefined) throw new UsageError("give --not-before or --delay, not both");
      const key = options.key ?? newKey();
      const item = await retryUnanswered(() => context.client().workItems.create.mutate({
        id: options.id,
        title,
        description: options.description,
        parentId: options.parent,
        dependsOn: options.dependsOn,
        priority: options.priority,
        // A child is in its parent's project: the default project does not apply to it.
        projectId: options.project ?? (options.parent ? undefined : context.project),
        requires: options.requires,
        concurrencyKey: options.concurrencyKey,
        notBefore: options.notBefore,
        delaySeconds: options.delay,
        externalId: options.externalId,
        idempotencyKey: key,
      }));
      return { data: item, human: `Created ${item.id} (${stageOf(item)}).` };
    }));

  program.command("update")
    .description("change an open item's title, description, requires, concurrency key or time gate (operator); a live lease carries on")
    .usage("<item> [--title T] [--description TEXT] [--requires C… | --no-requires] [--concurrency-key K | --no-concurrency-key] [--not-before TIME | --clear-not-before]")
    .argument("<item>")
    .option("--title <T>", "the new title")
    .option("--description <TEXT>", "the new description")
    .option("--requires <C>", "the capabilities it needs, replacing the old ones (repeatable or comma-separated)", collectNames)
    .option("--no-requires", "it needs no capability")
    .option("--concurrency-key <K>", "the new concurrency key")
    .option("--no-concurrency-key", "remove its concurrency key")
    .option("--not-before <TIME>", "not claimable before this time (ISO-8601 with offset)", isoTime)
    .option("--clear-not-before", "claimable now (removes the time gate)")
    .action(action(sink, async (context, options: {
      title?: string; description?: string; requires?: string[] | false; concurrencyKey?: string | false; notBefore?: string; clearNotBefore?: boolean;
    }, id: string) => {
      if (options.notBefore !== undefined && options.clearNotBefore) throw new UsageError("give --not-before or --clear-not-before, not both");
      const input: UpdateWorkItemInput = {
        id,
        title: options.title,
        description: options.description,
        requires: options.requires === false ? [] : options.requires,
        concurrencyKey: options.concurrencyKey === false ? null : options.concurrencyKey,
        notBefore: options.clearNotBefore ? null : options.notBefore,
      };
      if (Object.values(input).filter((value) => value !== undefined).length === 1) throw new UsageError("nothing to change: give at least one option");
      const item = await context.client().workItems.update.mutate(input);
      return { data: item, human: [`Updated ${item.id}:`, ...describeItem(item).slice(1, 3)].join("\n") };
    }));

  program.command("depend")
    .description("make <item> wait for <on> (or remove that dependency)")
    .usage("<item> <on> [--remove]")
    .argument("<item>")
    .argument("<on>")
    .option("--remove", "remove the dependency instead")
    .option("--key <K>", "idempotency key")
    .action(action(sink, async (context, options: { remove?: boolean; key?: string }, item: string, on: string) => {
      const client = context.client();
      if (options.remove) {
        const result = await client.workItems.removeDependency.mutate({ workItemId: item, dependsOnId: on });
        return { data: result, human: `${item} no longer depends on ${on} (${result.stage}).` };
      }
      const key = options.key ?? newKey();
      const result = await retryUnanswered(() => client.workItems.addDependency.mutate({ workItemId: item, dependsOnId: on, idempotencyKey: key }));
      return { data: result, human: `${item} now depends on ${on} (${result.stage}).` };
    }));
}
