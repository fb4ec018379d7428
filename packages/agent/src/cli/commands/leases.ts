/** Commands that take, hold and end leases: claim, renew, note, release, cancel, decompose; and an item's lease history, an operator's revoke. */
import type { Command } from "commander";
import { leaseNotCurrent } from "../../sdk/lease-holder";
import { retryUnanswered } from "../../sdk/retry";
import { waitInSteps } from "../../waiting";
import {
  action, collect, integer, namedLease, newKey, readStdin, required, secondsToWait, UsageError, valueOrFile, withCapabilityOption, withLeaseOptions,
  withProjectOption, type Sink,
} from "../context";
import { EXIT } from "../exit-codes";
import { describeAnswers, describePolicy, leaseLength, plural, seconds, stageOf, table } from "../format";

interface LeaseOptions {
  leaseId?: string;
  epoch?: number;
}

export function leaseCommands(program: Command, sink: Sink) {
  withCapabilityOption(withProjectOption(program.command("claim"), "claim only in this project"))
    .description("claim the next ready item you can take (or <item>, or the next child of P); --wait S: wait up to S seconds for one; --project P, --capability C: only there, only with these; remembers the lease")
    .usage("[<item>] [--parent P] [--duration S] [--wait S] [--key K]")
    .argument("[item]")
    .option("--parent <P>", "claim the next ready child of P")
    .option("--duration <S>", "lease length in seconds (server default 900)", integer)
    .option("--wait <S>", "wait up to S seconds for an item to become ready", secondsToWait)
    .option("--key <K>", "idempotency key (the same key replays the same claim)")
    .action(action(sink, async (context, options: {
      parent?: string; duration?: number; wait?: number; key?: string; project?: string; capability?: string[];
    }, workItemId?: string) => {
      const input = {
        workItemId,
        parentId: options.parent,
        // A named item, or a child of a named parent, is claimed in its own project: the default narrows only next-claims.
        projectId: options.project ?? (workItemId || options.parent ? undefined : context.project),
        capabilities: options.capability,
        durationSeconds: options.duration,
        idempotencyKey: options.key ?? newKey(),
      };
      const wait = options.wait ?? 0;
      // The same key on every step: a waiting claim that found nothing stores nothing under it.
      const claimed = await waitInSteps(wait, (waitSeconds) =>
        retryUnanswered(() => context.client().leases.claim.mutate(waitSeconds > 0 ? { ...input, waitSeconds } : input)));
      if (!claimed) {
        const human = wait > 0 ? `Nothing became ready to claim within ${seconds(wait * 1000)}.` : "Nothing is ready to claim. Try again later (or wait: --wait 60).";
        return { data: null, human, code: EXIT.NOT_CLAIMABLE };
      }
      const { lease, workItem, attention } = claimed;
      context.leases().hold(lease);
      const renewEvery = seconds((Date.parse(lease.expiresAt) - Date.parse(lease.acquiredAt)) / 3);
      const human = [
        `Claimed ${workItem.id} - ${workItem.title}`,
        `  lease ${lease.id} epoch ${lease.epoch}, ${leaseLength(lease)}, expires ${lease.expiresAt}`,
        `  ${describePolicy(workItem)}`,
        ...(workItem.description ? ["", ...workItem.description.split("\n").map((line) => `  ${line}`), ""] : []),
        ...describeAnswers(attention),
        `Next: work-graph note ${workItem.id} "…" as you go; work-graph renew ${workItem.id} every ~${renewEvery};`,
        `      work-graph release ${workItem.id} --evidence "…" when done;`,
        `      work-graph hand-back ${workItem.id} --reason "…" if you cannot do it (another worker takes it).`,
      ].join("\n");
      return { data: claimed, human };
    }));

  withLeaseOptions(program.command("renew"))
    .description("renew your lease on <item> (new expiry = server now + S, default 900)")
    .usage("<item> [--duration S]")
    .argument("<item>")
    .option("--duration <S>", "new lease length in seconds", integer)
    .action(action(sink, async (context, options: LeaseOptions & { duration?: number }, item: string) => {
      const lease = await context.leases().renew(item, options.duration, await namedLease(context, options));
      return { data: lease, human: `Renewed ${item}: epoch ${lease.epoch}, ${leaseLength(lease)}, expires ${lease.expiresAt}` };
    }));

  withLeaseOptions(program.command("note"))
    .description("add a progress note (- reads the text from stdin)")
    .usage("<item> <text…|->")
    .argument("<item>")
    .argument("<text...>")
    .option("--key <K>", "idempotency key")
    .action(action(sink, async (context, options: LeaseOptions & { key?: string }, item: string, words: string[]) => {
      const content = words.length === 1 && words[0] === "-" ? readStdin() : words.join(" ");
      const key = options.key ?? newKey();
      const note = await context.leases().write(item, (lease) =>
        retryUnanswered(() => context.client().leases.note.mutate({ ...lease, content, idempotencyKey: key })), () => false, await namedLease(context, options));
      return { data: note, human: `Noted on ${item} (epoch ${note.epoch}).` };
    }));

  withLeaseOptions(program.command("release"))
    .description("finish <item>: it becomes released")
    .usage("<item> --evidence E [--link URL]…")
    .argument("<item>")
    .option("--evidence <E>", "what was done and how it was verified (@file or - for stdin)")
    .option("--link <URL>", "a commit, pull request or document (repeatable)", collect)
    .action(action(sink, async (context, options: LeaseOptions & { evidence?: string; link?: string[] }, item: string) => {
      const evidence = valueOrFile(required(options.evidence, "--evidence"));
      const result = await context.leases().write(item, (lease) =>
        context.client().leases.release.mutate({ ...lease, evidence, links: options.link }), () => true, await namedLease(context, options));
      return { data: result, human: `Released ${item}. Lease epoch ${result.lease.epoch} ended (released).` };
    }));

  withLeaseOptions(program.command("cancel"))
    .description("cancel <item> (and its open descendants) with your lease")
    .usage("<item> --reason R")
    .argument("<item>")
    .option("--reason <R>", "why it should not be done")
    .action(action(sink, async (context, options: LeaseOptions & { reason?: string }, item: string) => {
      const reason = required(options.reason, "--reason");
      const result = await context.leases().write(item, (lease) =>
        context.client().leases.cancel.mutate({ ...lease, reason }), () => true, await namedLease(context, options));
      return { data: result, human: `Cancelled ${item}. Lease epoch ${result.lease.epoch} ended (cancelled).` };
    }));

  withLeaseOptions(program.command("hand-back"))
    .description("give <item> back unfinished because you cannot do it (missing tool, access or capability; rate limited): it is ready again for another worker, or after --retry-after")
    .usage("<item> --reason R [--retry-after S]")
    .argument("<item>")
    .option("--reason <R>", "why you cannot do it (recorded on the lease's end)")
    .option("--retry-after <S>", "keep it unclaimable for S seconds (0–86400), e.g. a rate limit's reset", integer)
    .action(action(sink, async (context, options: LeaseOptions & { reason?: string; retryAfter?: number }, item: string) => {
      const reason = required(options.reason, "--reason");
      const result = await context.leases().handBack(item, { reason, retryAfterSeconds: options.retryAfter }, await namedLease(context, options));
      return {
        data: result,
        // A server without leases.handBack shortens the lease instead (sdk/lease-holder.ts): it has no outcome yet.
        human: `Handed ${item} back (lease epoch ${result.lease.epoch} ${result.lease.outcome ? `ended, ${result.lease.outcome}` : `expires ${result.lease.expiresAt}`}). It is ${stageOf(result.workItem)}. Stop working on it.`,
      };
    }));

  withLeaseOptions(program.command("decompose"))
    .description("split <item> into children [{id?, title, description?, priority?, dependsOn?}]; your lease ends")
    .usage("<item> --children-json JSON|@file|- [--claim-child ID] [--duration S]")
    .argument("<item>")
    .option("--children-json <JSON>", "the children: a JSON array, @file or - for stdin")
    .option("--claim-child <ID>", "take the lease on this child at once")
    .option("--duration <S>", "the child lease's length in seconds", integer)
    .option("--key <K>", "idempotency key")
    .action(action(sink, async (context, options: LeaseOptions & { childrenJson?: string; claimChild?: string; duration?: number; key?: string }, item: string) => {
      const text = valueOrFile(required(options.childrenJson, "--children-json"));
      let children: unknown;
      try {
        children = JSON.parse(text);
      } catch (error) {
        throw new UsageError(`--children-json is not valid JSON: ${(error as Error).message}`);
      }
      if (!Array.isArray(children)) throw new UsageError("--children-json must be a JSON array of children");
      const key = options.key ?? newKey();
      const leases = context.leases();
      const result = await leases.write(item, (lease) =>
        retryUnanswered(() => context.client().leases.decompose.mutate({
          ...lease,
          children: children as { title: string }[],
          claimChildId: options.claimChild,
          durationSeconds: options.duration,
          idempotencyKey: key,
        })), () => true, await namedLease(context, options));
      if (result.childLease) leases.hold(result.childLease);
      const human = [
        `Decomposed ${item} into ${plural(result.children.length, "child")}: ${result.children.map((child) => `${child.id} (${child.stage})`).join(", ")}.`,
        `Your lease on ${item} ended; it waits for its children.`,
        ...(result.childLease ? [`You hold ${result.childLease.workItemId} now: lease epoch ${result.childLease.epoch}, expires ${result.childLease.expiresAt}.`] : []),
      ].join("\n");
      return { data: result, human };
    }));

  program.command("history")
    .description("all leases of <item>, in epoch order")
    .usage("<item>")
    .argument("<item>")
    .action(action(sink, async (context, _options: object, id: string) => {
      const leases = await context.client().leases.history.query({ workItemId: id });
      const human = leases.length === 0
        ? `${id} has never been claimed.`
        : table(leases.map((lease) => [
          String(lease.epoch), lease.workerId, lease.acquiredAt, lease.endedAt ?? `live until ${lease.expiresAt}`, lease.outcome ?? "-",
        ]), ["epoch", "worker", "acquired", "ended", "outcome"]);
      return { data: leases, human };
    }));

  withLeaseOptions(program.command("revoke"))
    .description("end the live lease on <item> now (operator); its worker is fenced (exit 5) and the item is ready again")
    .usage("<item> --reason R [--lease-id ID [--epoch N]]")
    .argument("<item>")
    .option("--reason <R>", "why (the fenced worker is told)")
    .action(action(sink, async (context, options: LeaseOptions & { reason?: string }, item: string) => {
      const reason = required(options.reason, "--reason");
      const client = context.client();
      const named = await namedLease(context, options);
      const current = named ? null : (await client.workItems.get.query({ id: item })).currentLease;
      const lease = named ?? (current && { leaseId: current.id, epoch: current.epoch });
      if (!lease) throw leaseNotCurrent("unknown", `${item} has no live lease to revoke`, { workItemId: item });
      const result = await client.leases.revoke.mutate({ ...lease, reason });
      return {
        data: result,
        human: `Revoked ${result.lease.workerId}'s lease on ${item} (epoch ${result.lease.epoch}). ${item} is now ${result.workItem.stage}.`,
      };
    }));
}
