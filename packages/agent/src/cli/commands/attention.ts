/** `work-graph attention …`: ask a human, list and read the questions, wait for an answer, answer one. */
import type { Command } from "commander";
import type { AttentionRequest } from "@work-graph/contract";
import { retryUnanswered } from "../../sdk/retry";
import { waitInSteps } from "../../waiting";
import {
  action, collect, integer, namedLease, newKey, required, secondsToWait, UsageError, withLeaseOptions, withProjectOption, type Sink,
} from "../context";
import { EXIT } from "../exit-codes";
import { seconds } from "../format";

export function attentionCommands(program: Command, sink: Sink) {
  const attention = program.command("attention").description("ask a human and read the answers");

  withLeaseOptions(attention.command("request"))
    .description("ask a human (kind: decision|authority|access|review|help|scope); blocking ends your lease")
    .usage("<item> --kind K --question Q [--option O]… [--context C] [--non-blocking]")
    .argument("<item>")
    .option("--kind <K>", "decision, authority, access, review, help or scope")
    .option("--question <Q>", "what you need from a human")
    .option("--option <O>", "a choice to pick from (repeatable)", collect)
    .option("--context <C>", "what the human needs to know to answer")
    .option("--non-blocking", "keep your lease: the question is only recorded")
    .option("--key <K>", "idempotency key")
    .action(action(sink, async (context, options: {
      kind?: string; question?: string; option?: string[]; context?: string; nonBlocking?: boolean; key?: string; leaseId?: string; epoch?: number;
    }, item: string) => {
      const kind = required(options.kind, "--kind");
      const question = required(options.question, "--question");
      const key = options.key ?? newKey();
      const result = await context.leases().write(item, (lease) =>
        retryUnanswered(() => context.client().attention.request.mutate({
          ...lease,
          kind: kind as AttentionRequest["kind"],
          question,
          context: options.context,
          options: options.option,
          blocking: !options.nonBlocking,
          idempotencyKey: key,
        })), (asked) => asked.endedLease !== null, await namedLease(context, options));
      const human = result.endedLease
        ? [
          `Asked for attention on ${item} (request ${result.request.id}).`,
          `Your lease ended; the item waits for an operator. Stop working on it; claim it again once answered (claim shows the answer).`,
        ].join("\n")
        : `Recorded a non-blocking attention request on ${item} (request ${result.request.id}). Your lease is still live.`;
      return { data: result, human };
    }));

  withProjectOption(attention.command("list"), "only this project's requests")
    .description("attention requests (open by default, oldest first)")
    .usage("[--status open|resolved|all] [--item X] [--project P] [--limit N]")
    .option("--status <S>", "open, resolved or all", "open")
    .option("--item <X>", "only this item's requests")
    .option("--limit <N>", "how many", integer)
    .action(action(sink, async (context, options: { status: string; item?: string; limit?: number; project?: string }) => {
      const { status } = options;
      if (!["open", "resolved", "all"].includes(status)) throw new UsageError("--status must be open, resolved or all");
      const page = await context.client().attention.list.query({
        status: status === "all" ? undefined : (status as "open" | "resolved"),
        workItemId: options.item,
        // A named item's requests are wherever it is: the default project narrows only the full list.
        projectId: options.project ?? (options.item ? undefined : context.project),
        limit: options.limit,
      });
      const human = page.items.length === 0
        ? `No ${status === "all" ? "" : `${status} `}attention requests.`
        : page.items.map((request) => [
          `${request.id}  ${request.workItemId}  [${request.kind}]${request.blocking ? " blocking" : ""}  ${request.status}  by ${request.workerId}  ${request.createdAt}`,
          `  ${request.question}`,
          ...(request.options.length ? [`  options: ${request.options.join(" | ")}`] : []),
          ...(request.resolution !== null ? [`  → ${request.resolution} (by ${request.resolvedBy})`] : []),
        ].join("\n")).join("\n");
      return { data: page, human };
    }));

  attention.command("show")
    .description("one attention request")
    .usage("<id>")
    .argument("<id>")
    .action(action(sink, async (context, _options: object, id: string) => {
      const request = await context.client().attention.get.query({ id });
      const human = [
        `${request.id} on ${request.workItemId} [${request.kind}]${request.blocking ? " blocking" : ""}, ${request.status}`,
        `  asked by ${request.workerId} at ${request.createdAt}`,
        `  ${request.question}`,
        ...(request.context ? [`  context: ${request.context}`] : []),
        ...(request.options.length ? [`  options: ${request.options.join(" | ")}`] : []),
        ...(request.resolution !== null ? [`  → ${request.resolution} (by ${request.resolvedBy} at ${request.resolvedAt})`] : []),
      ].join("\n");
      return { data: request, human };
    }));

  attention.command("wait")
    .description("wait until the request is answered (default up to 3600 s; exit 10 if not) and print the answer")
    .usage("<id> [--timeout S]")
    .argument("<id>")
    .option("--timeout <S>", "give up after S seconds (default 3600)", secondsToWait)
    .action(action(sink, async (context, options: { timeout?: number }, id: string) => {
      const timeout = options.timeout ?? 3600;
      let latest: AttentionRequest | null = null;
      await waitInSteps(timeout, async (timeoutSeconds) => {
        latest = await retryUnanswered(() => context.client().attention.wait.query({ id, timeoutSeconds: Math.max(1, timeoutSeconds) }));
        return latest.status === "resolved" ? latest : null;
      });
      const request = latest!;
      if (request.status !== "resolved") {
        return { data: request, human: `Still unanswered after ${seconds(timeout * 1000)}: ${request.question}`, code: EXIT.WAIT_TIMEOUT };
      }
      const human = [
        `Answered: ${request.resolution}`,
        `  by ${request.resolvedBy} at ${request.resolvedAt} (request ${request.id} on ${request.workItemId})`,
        ...(request.blocking ? [`Next: work-graph claim ${request.workItemId} (the claim shows the answer too).`] : []),
      ].join("\n");
      return { data: request, human };
    }));

  attention.command("resolve")
    .description("answer an attention request (operator)")
    .usage("<id> --resolution R")
    .argument("<id>")
    .option("--resolution <R>", "the answer")
    .option("--key <K>", "idempotency key")
    .action(action(sink, async (context, options: { resolution?: string; key?: string }, id: string) => {
      const resolution = required(options.resolution, "--resolution");
      const key = options.key ?? newKey();
      const result = await retryUnanswered(() => context.client().attention.resolve.mutate({ id, resolution, idempotencyKey: key }));
      return { data: result, human: `Resolved ${id}. ${result.workItem.id} is now ${result.workItem.stage}.` };
    }));
}
