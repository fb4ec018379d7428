/** Commands on work items: the queue, one item, creating and linking items, the event log. */
import type { Command } from "commander";
import { retryUnanswered } from "../../sdk/retry";
import { action, collect, integer, newKey, required, type Sink } from "../context";
import { describeItem, oneLine, table } from "../format";

export function itemCommands(program: Command, sink: Sink) {
  program.command("queue")
    .description("ready items in the order a next claim takes them")
    .usage("[--limit N] [--worker-id W]")
    .option("--limit <N>", "how many", integer)
    .option("--worker-id <W>", "the queue as worker W sees it")
    .action(action(sink, async (context, options: { limit?: number; workerId?: string }) => {
      const items = await context.client().workItems.queue.query({ limit: options.limit, workerId: options.workerId });
      const human = items.length === 0
        ? "Nothing is ready."
        : table(items.map((item, index) => [String(index + 1), item.id, String(item.priority), item.previousWorkerId ?? "-", oneLine(item.title, 60)]),
          ["#", "id", "priority", "previous worker", "title"]);
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

  program.command("events")
    .description("the event log (--follow keeps tailing)")
    .usage("[--item X] [--after N] [--limit N] [--follow]")
    .option("--item <X>", "only this item's events")
    .option("--after <N>", "events after this sequence number", integer)
    .option("--limit <N>", "how many", integer)
    .option("--follow", "keep printing new events until interrupted (JSON lines with --json)")
    .action(action(sink, async (context, options: { item?: string; after?: number; limit?: number; follow?: boolean }) => {
      const client = context.client();
      let after = options.after;
      const format = (event: Awaited<ReturnType<typeof client.events.list.query>>["items"][number]) =>
        `${String(event.sequence).padStart(6)}  ${event.createdAt}  ${event.type.padEnd(26)} ${event.workItemId}  ${event.actor}${event.epoch !== null ? `  epoch ${event.epoch}` : ""}  ${oneLine(JSON.stringify(event.data), 100)}`;
      if (!options.follow) {
        const page = await client.events.list.query({ workItemId: options.item, after, limit: options.limit });
        return { data: page, human: page.items.length === 0 ? "No events." : page.items.map(format).join("\n") };
      }
      let stopped = false;
      process.once("SIGINT", () => (stopped = true));
      while (!stopped) {
        const page = await client.events.list.query({ workItemId: options.item, after, limit: options.limit ?? 500 });
        for (const event of page.items) process.stdout.write(`${context.json ? JSON.stringify(event) : format(event)}\n`);
        if (page.nextCursor) after = Number(page.nextCursor);
        if (page.items.length === 0) await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      return { data: undefined, human: "" };
    }));

  program.command("create")
    .description("create a work item")
    .usage("--title T [--id ID] [--parent P] [--depends-on D]… [--priority N] [--description TEXT]")
    .option("--title <T>", "its title")
    .option("--id <ID>", "its id (generated when omitted)")
    .option("--parent <P>", "make it a child of P")
    .option("--depends-on <D>", "an item it waits for (repeatable)", collect)
    .option("--priority <N>", "higher first (default 0)", integer)
    .option("--description <TEXT>", "what to do")
    .option("--key <K>", "idempotency key")
    .action(action(sink, async (context, options: { title?: string; id?: string; parent?: string; dependsOn?: string[]; priority?: number; description?: string; key?: string }) => {
      const title = required(options.title, "--title");
      const key = options.key ?? newKey();
      const item = await retryUnanswered(() => context.client().workItems.create.mutate({
        id: options.id,
        title,
        description: options.description,
        parentId: options.parent,
        dependsOn: options.dependsOn,
        priority: options.priority,
        idempotencyKey: key,
      }));
      return { data: item, human: `Created ${item.id} (${item.stage}).` };
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
