/**
 * `work-graph`: the Work Graph API from a shell. Config from WORK_GRAPH_URL / WORK_GRAPH_TOKEN
 * (flags --url / --token override). Human output by default, --json for machines; exit codes
 * by error reason (cli/exit-codes.ts).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { apiUrl, createWorkGraphClient, type AttentionRequest, type Lease, type WorkGraphClient, type WorkItem } from "../sdk/client";
import { retryIdempotent, toWorkGraphError, WorkGraphError } from "../sdk/errors";
import { ROLES, type Role } from "../../../../server/domain/contract";
import { EXIT, exitCodeFor } from "./exit-codes";
import { defaultStatePath, LeaseState } from "./state";
import { COMMAND_HELP, helpText, PRIME } from "./text";

const OPTIONS = {
  url: { type: "string" },
  token: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  "lease-id": { type: "string" },
  epoch: { type: "string" },
  duration: { type: "string" },
  key: { type: "string" },
  evidence: { type: "string" },
  link: { type: "string", multiple: true },
  reason: { type: "string" },
  "children-json": { type: "string" },
  "claim-child": { type: "string" },
  kind: { type: "string" },
  question: { type: "string" },
  option: { type: "string", multiple: true },
  context: { type: "string" },
  "non-blocking": { type: "boolean" },
  resolution: { type: "string" },
  status: { type: "string" },
  item: { type: "string" },
  after: { type: "string" },
  limit: { type: "string" },
  follow: { type: "boolean" },
  title: { type: "string" },
  id: { type: "string" },
  parent: { type: "string" },
  "depends-on": { type: "string", multiple: true },
  priority: { type: "string" },
  description: { type: "string" },
  role: { type: "string" },
  "worker-id": { type: "string" },
  label: { type: "string" },
  remove: { type: "boolean" },
  wait: { type: "string" },
  timeout: { type: "string" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

/** A mistake on the command line: exit 2 with the command's usage. */
class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

interface Output {
  data: unknown;
  human: string;
  code?: number;
}

interface Context {
  values: Values;
  args: string[];
  url: string;
  json: boolean;
  client: () => WorkGraphClient;
  state: () => LeaseState;
}

// ---------------------------------------------------------------------------------------------
// formatting

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function seconds(ms: number): string {
  const total = Math.round(ms / 1000);
  if (total < 120) return `${total}s`;
  if (total < 7200) return `${Math.floor(total / 60)}m${total % 60 ? ` ${total % 60}s` : ""}`;
  return `${Math.floor(total / 3600)}h ${Math.floor((total % 3600) / 60)}m`;
}

/** Lease length as the server set it (no local clock involved). */
const leaseLength = (lease: Lease) => seconds(Date.parse(lease.expiresAt) - Date.parse(lease.renewedAt ?? lease.acquiredAt));

function table(rows: string[][], header: string[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? "").length)));
  return all.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  ").trimEnd()).join("\n");
}

const oneLine = (text: string, max = 80) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

function describeLease(lease: Lease): string {
  const state = lease.endedAt ? `ended ${lease.endedAt} (${lease.outcome})` : `expires ${lease.expiresAt}`;
  return `lease ${lease.id} epoch ${lease.epoch}, worker ${lease.workerId}, ${state}`;
}

function describeAnswers(attention: AttentionRequest[]): string[] {
  if (attention.length === 0) return [];
  return [
    "Attention requests raised on it before (read the answers before you continue):",
    ...attention.map((request) =>
      `  [${request.kind}] ${request.question}\n    → ${request.status === "resolved" ? `${request.resolution} (by ${request.resolvedBy})` : "not answered yet"}`),
  ];
}

function describeItem(item: WorkItem): string[] {
  return [
    `${item.id} - ${item.title}`,
    `  stage ${item.stage}, status ${item.status}, priority ${item.priority}`,
    `  parent ${item.parentId ?? "-"}, depends on ${item.dependsOn.length ? item.dependsOn.join(", ") : "-"}, open children ${item.openChildCount}`,
    `  current lease: ${item.currentLease ? describeLease(item.currentLease) : "none"}`,
    `  previous worker: ${item.previousWorkerId ?? "-"}`,
    `  created ${item.createdAt}, updated ${item.updatedAt}`,
    ...(item.description ? ["", ...item.description.split("\n").map((line) => `  ${line}`)] : []),
  ];
}

// ---------------------------------------------------------------------------------------------
// argument helpers

function positional(context: Context, index: number, name: string, command: string): string {
  const value = context.args[index];
  if (value === undefined || value === "") throw new UsageError(`missing <${name}>`, command);
  return value;
}

function required(context: Context, option: keyof Values, command: string): string {
  const value = context.values[option];
  if (typeof value !== "string" || value.trim() === "") throw new UsageError(`--${option} is required`, command);
  return value;
}

function integer(context: Context, option: keyof Values, command: string): number | undefined {
  const value = context.values[option];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^-?\d+$/.test(value.trim())) throw new UsageError(`--${option} must be an integer`, command);
  return Number(value);
}

/** Seconds to wait (--wait, --timeout): a non-negative number, fractions allowed. */
function waitOption(context: Context, option: "wait" | "timeout", command: string): number | undefined {
  const value = context.values[option];
  if (value === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(value.trim())) throw new UsageError(`--${option} must be a number of seconds`, command);
  return Number(value);
}

/** The server holds a request at most this long (API.md: waitSeconds / timeoutSeconds ≤ 60); longer waits are several requests. */
const SERVER_WAIT_LIMIT_SECONDS = 60;

/**
 * Calls `once(seconds)` with server-side waits of at most 60 s until it returns something
 * other than `null`/`undefined`, or `totalSeconds` have passed.
 */
async function waitInSteps<T>(totalSeconds: number, once: (seconds: number) => Promise<T | null>): Promise<T | null> {
  const deadline = Date.now() + totalSeconds * 1000;
  for (;;) {
    const left = Math.max(0, (deadline - Date.now()) / 1000);
    const result = await once(Math.min(left, SERVER_WAIT_LIMIT_SECONDS));
    if (result !== null || left <= SERVER_WAIT_LIMIT_SECONDS) return result;
  }
}

function noExtraArgs(context: Context, count: number, command: string) {
  if (context.args.length > count) throw new UsageError(`unexpected argument ${JSON.stringify(context.args[count])}`, command);
}

function readStdin(): string {
  return readFileSync(0, "utf8");
}

/** `-` reads stdin, `@path` reads a file, anything else is the value itself. */
function valueOrFile(value: string): string {
  if (value === "-") return readStdin();
  if (value.startsWith("@")) return readFileSync(value.slice(1), "utf8");
  return value;
}

const newKey = () => globalThis.crypto.randomUUID();

// ---------------------------------------------------------------------------------------------
// the lease an item command acts with

interface LeaseRef {
  leaseId: string;
  epoch: number;
  source: "flags" | "state";
}

/**
 * The lease a write acts with: the explicit --lease-id/--epoch, or the one this session (its
 * state file) claimed itself. Never the item's current lease from the server: that may be
 * another session's, and writing with it would defeat fencing (ADR 002).
 */
async function leaseFor(context: Context, item: string, command: string): Promise<LeaseRef> {
  const flagLease = context.values["lease-id"];
  const flagEpoch = integer(context, "epoch", command);
  if (flagLease) {
    const epoch = flagEpoch ?? (await context.client().leases.get.query({ leaseId: flagLease })).epoch;
    return { leaseId: flagLease, epoch, source: "flags" };
  }
  if (flagEpoch !== undefined) throw new UsageError("--epoch needs --lease-id", command);
  const remembered = context.state().get(item);
  if (remembered?.fenced) {
    throw new WorkGraphError(
      "LEASE_NOT_CURRENT",
      `your lease on ${item} (epoch ${remembered.epoch}) was fenced (${remembered.fenced.kind}): stop working on it. ` +
        `If it is still yours to do, claim it again: work-graph claim ${item}`,
      { code: "CONFLICT", detail: { kind: remembered.fenced.kind, workItemId: item, leaseId: remembered.leaseId, epoch: remembered.epoch, local: true } },
    );
  }
  if (remembered) return { leaseId: remembered.leaseId, epoch: remembered.epoch, source: "state" };
  throw new WorkGraphError(
    "LEASE_NOT_CURRENT",
    `this session holds no lease on ${item}: claim it first (work-graph claim ${item}), or pass --lease-id and --epoch`,
    { code: "CONFLICT", detail: { kind: "unknown", workItemId: item, local: true } },
  );
}

/** Runs a lease-bound write; once the server fences the remembered lease, the session keeps refusing it. */
async function withLease<T>(context: Context, item: string, command: string, write: (lease: LeaseRef) => Promise<T>): Promise<T> {
  const lease = await leaseFor(context, item, command);
  try {
    return await write(lease);
  } catch (thrown) {
    const error = toWorkGraphError(thrown);
    if (error.fenced && lease.source === "state") context.state().fence(item, lease.leaseId, String(error.detail?.kind ?? "unknown"));
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// commands

type Command = (context: Context) => Promise<Output>;

const commands: Record<string, Command> = {
  async queue(context) {
    noExtraArgs(context, 0, "queue");
    const items = await context.client().workItems.queue.query({
      limit: integer(context, "limit", "queue"),
      workerId: context.values["worker-id"],
    });
    const human = items.length === 0
      ? "Nothing is ready."
      : table(items.map((item, index) => [String(index + 1), item.id, String(item.priority), item.previousWorkerId ?? "-", oneLine(item.title, 60)]),
        ["#", "id", "priority", "previous worker", "title"]);
    return { data: items, human };
  },

  async claim(context) {
    noExtraArgs(context, 1, "claim");
    const workItemId = context.args[0];
    const key = context.values.key ?? newKey();
    const input = {
      workItemId,
      parentId: context.values.parent,
      durationSeconds: integer(context, "duration", "claim"),
      idempotencyKey: key,
    };
    const wait = waitOption(context, "wait", "claim") ?? 0;
    // The same key on every step: a waiting claim that found nothing stores nothing under it.
    const claimed = await waitInSteps(wait, (waitSeconds) =>
      retryIdempotent(() => context.client().leases.claim.mutate(waitSeconds > 0 ? { ...input, waitSeconds } : input)),
    );
    if (!claimed) {
      const human = wait > 0 ? `Nothing became ready to claim within ${seconds(wait)}.` : "Nothing is ready to claim. Try again later (or wait: --wait 60).";
      return { data: null, human, code: EXIT.NOT_CLAIMABLE };
    }
    const { lease, workItem, attention } = claimed;
    context.state().remember(lease);
    const renewEvery = seconds((Date.parse(lease.expiresAt) - Date.parse(lease.acquiredAt)) / 3);
    const human = [
      `Claimed ${workItem.id} - ${workItem.title}`,
      `  lease ${lease.id} epoch ${lease.epoch}, ${leaseLength(lease)}, expires ${lease.expiresAt}`,
      ...(workItem.description ? ["", ...workItem.description.split("\n").map((line) => `  ${line}`), ""] : []),
      ...describeAnswers(attention),
      `Next: work-graph note ${workItem.id} "…" as you go; work-graph renew ${workItem.id} every ~${renewEvery};`,
      `      work-graph release ${workItem.id} --evidence "…" when done.`,
    ].join("\n");
    return { data: claimed, human };
  },

  async renew(context) {
    const item = positional(context, 0, "item", "renew");
    noExtraArgs(context, 1, "renew");
    const durationSeconds = integer(context, "duration", "renew");
    const lease = await withLease(context, item, "renew", (ref) =>
      context.client().leases.renew.mutate({ leaseId: ref.leaseId, epoch: ref.epoch, durationSeconds }));
    context.state().remember(lease);
    return { data: lease, human: `Renewed ${item}: epoch ${lease.epoch}, ${leaseLength(lease)}, expires ${lease.expiresAt}` };
  },

  async note(context) {
    const item = positional(context, 0, "item", "note");
    const words = context.args.slice(1);
    if (words.length === 0) throw new UsageError("missing <text>", "note");
    const content = words.length === 1 && words[0] === "-" ? readStdin() : words.join(" ");
    const key = context.values.key ?? newKey();
    const note = await withLease(context, item, "note", (ref) =>
      retryIdempotent(() => context.client().leases.note.mutate({ leaseId: ref.leaseId, epoch: ref.epoch, content, idempotencyKey: key })));
    return { data: note, human: `Noted on ${item} (epoch ${note.epoch}).` };
  },

  async release(context) {
    const item = positional(context, 0, "item", "release");
    noExtraArgs(context, 1, "release");
    const evidence = valueOrFile(required(context, "evidence", "release"));
    const result = await withLease(context, item, "release", (ref) =>
      context.client().leases.release.mutate({ leaseId: ref.leaseId, epoch: ref.epoch, evidence, links: context.values.link }));
    context.state().forget(item);
    return { data: result, human: `Released ${item}. Lease epoch ${result.lease.epoch} ended (released).` };
  },

  async cancel(context) {
    const item = positional(context, 0, "item", "cancel");
    noExtraArgs(context, 1, "cancel");
    const reason = required(context, "reason", "cancel");
    const result = await withLease(context, item, "cancel", (ref) =>
      context.client().leases.cancel.mutate({ leaseId: ref.leaseId, epoch: ref.epoch, reason }));
    context.state().forget(item);
    return { data: result, human: `Cancelled ${item}. Lease epoch ${result.lease.epoch} ended (cancelled).` };
  },

  async decompose(context) {
    const item = positional(context, 0, "item", "decompose");
    noExtraArgs(context, 1, "decompose");
    let children: unknown;
    try {
      children = JSON.parse(valueOrFile(required(context, "children-json", "decompose")));
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`--children-json is not valid JSON: ${(error as Error).message}`, "decompose");
    }
    if (!Array.isArray(children)) throw new UsageError("--children-json must be a JSON array of children", "decompose");
    const key = context.values.key ?? newKey();
    const result = await withLease(context, item, "decompose", (ref) =>
      retryIdempotent(() => context.client().leases.decompose.mutate({
        leaseId: ref.leaseId,
        epoch: ref.epoch,
        children: children as { title: string }[],
        claimChildId: context.values["claim-child"],
        durationSeconds: integer(context, "duration", "decompose"),
        idempotencyKey: key,
      })));
    context.state().forget(item);
    if (result.childLease) context.state().remember(result.childLease);
    const human = [
      `Decomposed ${item} into ${plural(result.children.length, "child")}: ${result.children.map((child) => `${child.id} (${child.stage})`).join(", ")}.`,
      `Your lease on ${item} ended; it waits for its children.`,
      ...(result.childLease ? [`You hold ${result.childLease.workItemId} now: lease epoch ${result.childLease.epoch}, expires ${result.childLease.expiresAt}.`] : []),
    ].join("\n");
    return { data: result, human };
  },

  async "attention request"(context) {
    const item = positional(context, 0, "item", "attention request");
    noExtraArgs(context, 1, "attention request");
    const kind = required(context, "kind", "attention request");
    const question = required(context, "question", "attention request");
    const blocking = !context.values["non-blocking"];
    const key = context.values.key ?? newKey();
    const result = await withLease(context, item, "attention request", (ref) =>
      retryIdempotent(() => context.client().attention.request.mutate({
        leaseId: ref.leaseId,
        epoch: ref.epoch,
        kind: kind as AttentionRequest["kind"],
        question,
        context: context.values.context,
        options: context.values.option,
        blocking,
        idempotencyKey: key,
      })));
    if (result.endedLease) context.state().forget(item);
    const human = result.endedLease
      ? [
        `Asked for attention on ${item} (request ${result.request.id}).`,
        `Your lease ended; the item waits for an operator. Stop working on it; claim it again once answered (claim shows the answer).`,
      ].join("\n")
      : `Recorded a non-blocking attention request on ${item} (request ${result.request.id}). Your lease is still live.`;
    return { data: result, human };
  },

  async "attention list"(context) {
    noExtraArgs(context, 0, "attention list");
    const status = context.values.status ?? "open";
    if (!["open", "resolved", "all"].includes(status)) throw new UsageError("--status must be open, resolved or all", "attention list");
    const page = await context.client().attention.list.query({
      status: status === "all" ? undefined : (status as "open" | "resolved"),
      workItemId: context.values.item,
      limit: integer(context, "limit", "attention list"),
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
  },

  async "attention show"(context) {
    const id = positional(context, 0, "id", "attention show");
    noExtraArgs(context, 1, "attention show");
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
  },

  async "attention wait"(context) {
    const id = positional(context, 0, "id", "attention wait");
    noExtraArgs(context, 1, "attention wait");
    const timeout = waitOption(context, "timeout", "attention wait") ?? 3600;
    let latest: AttentionRequest | null = null;
    await waitInSteps(timeout, async (timeoutSeconds) => {
      latest = await retryIdempotent(() => context.client().attention.wait.query({ id, timeoutSeconds: Math.max(1, timeoutSeconds) }));
      return latest.status === "resolved" ? latest : null;
    });
    const request = latest!;
    if (request.status !== "resolved") {
      return { data: request, human: `Still unanswered after ${seconds(timeout)}: ${request.question}`, code: EXIT.WAIT_TIMEOUT };
    }
    const human = [
      `Answered: ${request.resolution}`,
      `  by ${request.resolvedBy} at ${request.resolvedAt} (request ${request.id} on ${request.workItemId})`,
      ...(request.blocking ? [`Next: work-graph claim ${request.workItemId} (the claim shows the answer too).`] : []),
    ].join("\n");
    return { data: request, human };
  },

  async "attention resolve"(context) {
    const id = positional(context, 0, "id", "attention resolve");
    noExtraArgs(context, 1, "attention resolve");
    const resolution = required(context, "resolution", "attention resolve");
    const key = context.values.key ?? newKey();
    const result = await retryIdempotent(() => context.client().attention.resolve.mutate({ id, resolution, idempotencyKey: key }));
    return { data: result, human: `Resolved ${id}. ${result.workItem.id} is now ${result.workItem.stage}.` };
  },

  async show(context) {
    const id = positional(context, 0, "item", "show");
    noExtraArgs(context, 1, "show");
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
  },

  async history(context) {
    const id = positional(context, 0, "item", "history");
    noExtraArgs(context, 1, "history");
    const leases = await context.client().leases.history.query({ workItemId: id });
    const human = leases.length === 0
      ? `${id} has never been claimed.`
      : table(leases.map((lease) => [
        String(lease.epoch), lease.workerId, lease.acquiredAt, lease.endedAt ?? `live until ${lease.expiresAt}`, lease.outcome ?? "-",
      ]), ["epoch", "worker", "acquired", "ended", "outcome"]);
    return { data: leases, human };
  },

  async events(context) {
    noExtraArgs(context, 0, "events");
    const client = context.client();
    let after = integer(context, "after", "events");
    const limit = integer(context, "limit", "events");
    const format = (event: Awaited<ReturnType<typeof client.events.list.query>>["items"][number]) =>
      `${String(event.sequence).padStart(6)}  ${event.createdAt}  ${event.type.padEnd(26)} ${event.workItemId}  ${event.actor}${event.epoch !== null ? `  epoch ${event.epoch}` : ""}  ${oneLine(JSON.stringify(event.data), 100)}`;
    if (!context.values.follow) {
      const page = await client.events.list.query({ workItemId: context.values.item, after, limit });
      return { data: page, human: page.items.length === 0 ? "No events." : page.items.map(format).join("\n") };
    }
    // --follow: print as they come (JSON lines with --json) until interrupted.
    let stopped = false;
    process.once("SIGINT", () => (stopped = true));
    while (!stopped) {
      const page = await client.events.list.query({ workItemId: context.values.item, after, limit: limit ?? 500 });
      for (const event of page.items) process.stdout.write(`${context.json ? JSON.stringify(event) : format(event)}\n`);
      if (page.nextCursor) after = Number(page.nextCursor);
      if (page.items.length === 0) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    return { data: undefined, human: "" };
  },

  async create(context) {
    noExtraArgs(context, 0, "create");
    const title = required(context, "title", "create");
    const key = context.values.key ?? newKey();
    const item = await retryIdempotent(() => context.client().workItems.create.mutate({
      id: context.values.id,
      title,
      description: context.values.description,
      parentId: context.values.parent,
      dependsOn: context.values["depends-on"],
      priority: integer(context, "priority", "create"),
      idempotencyKey: key,
    }));
    return { data: item, human: `Created ${item.id} (${item.stage}).` };
  },

  async depend(context) {
    const item = positional(context, 0, "item", "depend");
    const on = positional(context, 1, "on", "depend");
    noExtraArgs(context, 2, "depend");
    const client = context.client();
    if (context.values.remove) {
      const result = await client.workItems.removeDependency.mutate({ workItemId: item, dependsOnId: on });
      return { data: result, human: `${item} no longer depends on ${on} (${result.stage}).` };
    }
    const key = context.values.key ?? newKey();
    const result = await retryIdempotent(() => client.workItems.addDependency.mutate({ workItemId: item, dependsOnId: on, idempotencyKey: key }));
    return { data: result, human: `${item} now depends on ${on} (${result.stage}).` };
  },

  async "tokens create"(context) {
    noExtraArgs(context, 0, "tokens create");
    const role = required(context, "role", "tokens create");
    if (!(ROLES as readonly string[]).includes(role)) throw new UsageError("--role must be agent, operator or admin", "tokens create");
    const result = await context.client().tokens.create.mutate({
      role: role as Role,
      workerId: context.values["worker-id"],
      label: context.values.label,
    });
    return { data: result, human: `${result.token}\n(token id ${result.id}; the secret above is shown only once - keep it)` };
  },

  async "tokens list"(context) {
    noExtraArgs(context, 0, "tokens list");
    const tokens = await context.client().tokens.list.query();
    const human = table(tokens.map((token) => [
      token.id, token.role, token.workerId ?? "-", token.label ?? "-", token.createdAt, token.lastUsedAt ?? "never",
      token.revokedAt ? `revoked ${token.revokedAt}` : "active",
    ]), ["id", "role", "worker", "label", "created", "last used", "state"]);
    return { data: tokens, human };
  },

  async "tokens revoke"(context) {
    const id = positional(context, 0, "id", "tokens revoke");
    noExtraArgs(context, 1, "tokens revoke");
    const result = await context.client().tokens.revoke.mutate({ id });
    return { data: result, human: `Revoked token ${result.id} at ${result.revokedAt}.` };
  },

  async revoke(context) {
    const item = positional(context, 0, "item", "revoke");
    noExtraArgs(context, 1, "revoke");
    const reason = required(context, "reason", "revoke");
    const client = context.client();
    const flagLease = context.values["lease-id"];
    const lease = flagLease
      ? { id: flagLease, epoch: integer(context, "epoch", "revoke") ?? (await client.leases.get.query({ leaseId: flagLease })).epoch }
      : (await client.workItems.get.query({ id: item })).currentLease;
    if (!lease) {
      throw new WorkGraphError("LEASE_NOT_CURRENT", `${item} has no live lease to revoke`, { code: "CONFLICT", detail: { kind: "unknown", workItemId: item, local: true } });
    }
    const result = await client.leases.revoke.mutate({ leaseId: lease.id, epoch: lease.epoch, reason });
    return {
      data: result,
      human: `Revoked ${result.lease.workerId}'s lease on ${item} (epoch ${result.lease.epoch}). ${item} is now ${result.workItem.stage}.`,
    };
  },

  async workers(context) {
    noExtraArgs(context, 0, "workers");
    const workers = await context.client().workers.list.query({});
    const human = workers.length === 0
      ? "No workers seen yet."
      : table(workers.map((worker) => [
        worker.workerId, String(worker.liveLeases), worker.lastSeenAt ?? "never",
        `${worker.lastHour.claimed}/${worker.lastHour.released}/${worker.lastHour.expired}/${worker.lastHour.revoked}`,
        worker.drained ? `drained${worker.drainReason ? `: ${oneLine(worker.drainReason, 40)}` : ""}` : "-",
      ]), ["worker", "live", "last seen", "last hour claimed/released/expired/revoked", "drained"]);
    return { data: workers, human };
  },

  async drain(context) {
    const workerId = positional(context, 0, "worker", "drain");
    noExtraArgs(context, 1, "drain");
    const worker = await context.client().workers.drain.mutate({ workerId, reason: context.values.reason });
    return { data: worker, human: `Drained ${workerId}: it claims nothing new; its ${plural(worker.liveLeases, "live lease")} carry on.` };
  },

  async undrain(context) {
    const workerId = positional(context, 0, "worker", "undrain");
    noExtraArgs(context, 1, "undrain");
    const worker = await context.client().workers.undrain.mutate({ workerId });
    return { data: worker, human: `Undrained ${workerId}: it may claim again.` };
  },

  async mcp(context) {
    noExtraArgs(context, 0, "mcp");
    const { serveMcp } = await import("../mcp/server"); // loaded only here: other commands start faster
    await serveMcp({ client: context.client() });
    return { data: undefined, human: "" };
  },

  async health(context) {
    noExtraArgs(context, 0, "health");
    const result = await context.client().health.check.query();
    return { data: result, human: `ok: database ${result.database}, server time ${result.now} (${apiUrl(context.url)})` };
  },
};

/** Words that form a two-word command ("attention request", "tokens create"). */
const GROUPS = new Set(["attention", "tokens"]);

function usageOf(command: string | undefined): string {
  const help = command ? COMMAND_HELP[command] : undefined;
  return help ? `usage: work-graph ${help.usage}` : "run `work-graph help` for the commands";
}

function printError(error: WorkGraphError, json: boolean) {
  if (json) {
    process.stderr.write(`${JSON.stringify({ error: { reason: error.reason, code: error.code, message: error.message, detail: error.detail } })}\n`);
    return;
  }
  const kind = error.leaseKind ? ` (${error.leaseKind})` : "";
  const lines = [`work-graph: ${error.reason}${kind}: ${error.message}`];
  if (error.leaseKind === "revoked") lines.push(`An operator revoked it${error.detail.revokedBy ? ` (${String(error.detail.revokedBy)})` : ""}: ${String(error.detail.reason ?? "no reason given")}`);
  if (error.fenced) lines.push("Your lease on this item is gone: stop working on it and write nothing more about it. Claim again to continue.");
  if (error.drained) lines.push("An operator drained this worker: finish the leases you hold, claim nothing new.");
  if (error.reason === "UNAUTHENTICATED") lines.push("Check WORK_GRAPH_TOKEN / --token.");
  if (error.reason === "NETWORK") lines.push("Check WORK_GRAPH_URL / --url and that the server is running.");
  if (error.reason === "NOT_CLAIMABLE" && error.detail.stage) lines.push(`The item is ${String(error.detail.stage)}.`);
  process.stderr.write(`${lines.join("\n")}\n`);
}

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    process.stderr.write(`work-graph: ${(error as Error).message}\n${usageOf(undefined)}\n`);
    return EXIT.USAGE;
  }
  const { values, positionals } = parsed;
  const json = values.json ?? false;
  const args = positionals.slice(1);
  let name = positionals[0];
  if (name && GROUPS.has(name)) {
    const sub = args.shift();
    name = sub ? `${name} ${sub}` : name;
  }

  if (!name || name === "help" || values.help) {
    const topic = name === "help" ? args.join(" ") : name;
    const help = topic ? COMMAND_HELP[topic] : undefined;
    process.stdout.write(help ? `usage: work-graph ${help.usage}\n  ${help.summary}\n` : helpText());
    return topic && !help && name !== "help" && !values.help ? EXIT.USAGE : EXIT.OK;
  }
  if (name === "prime") {
    process.stdout.write(PRIME);
    return EXIT.OK;
  }
  const command = commands[name];
  if (!command && GROUPS.has(name.split(" ")[0]!)) {
    const group = name.split(" ")[0]!;
    const subcommands = Object.entries(COMMAND_HELP).filter(([key]) => key.startsWith(`${group} `));
    process.stderr.write(`work-graph: ${group} needs a subcommand:\n${subcommands.map(([, help]) => `  work-graph ${help.usage}`).join("\n")}\n`);
    return EXIT.USAGE;
  }
  if (!command) {
    process.stderr.write(`work-graph: unknown command ${JSON.stringify(name)}\n${usageOf(undefined)}\n`);
    return EXIT.USAGE;
  }

  const url = (values.url ?? process.env.WORK_GRAPH_URL ?? "http://localhost:3000").replace(/\/+$/, "");
  const token = values.token ?? process.env.WORK_GRAPH_TOKEN ?? "";
  let client: WorkGraphClient | undefined;
  let state: LeaseState | undefined;
  const context: Context = {
    values,
    args,
    url,
    json,
    client: () => {
      if (!token && name !== "health") throw new UsageError("no token: set WORK_GRAPH_TOKEN or pass --token");
      // Waiting calls (claim --wait, attention wait) are held by the server for up to 60 s.
      return (client ??= createWorkGraphClient({ url, token: token || undefined, timeoutMs: 90_000 }));
    },
    state: () => (state ??= new LeaseState(defaultStatePath(), apiUrl(url), token)),
  };

  try {
    const output = await command(context);
    if (output.data !== undefined || output.human) {
      process.stdout.write(json ? `${JSON.stringify(output.data, null, 2)}\n` : output.human ? `${output.human}\n` : "");
    }
    return output.code ?? EXIT.OK;
  } catch (thrown) {
    if (thrown instanceof UsageError) {
      process.stderr.write(`work-graph: ${thrown.message}\n${usageOf(thrown.command ?? name)}\n`);
      return EXIT.USAGE;
    }
    const error = toWorkGraphError(thrown);
    printError(error, json);
    return error.reason === "INTERNAL" && !(thrown instanceof WorkGraphError) ? EXIT.UNEXPECTED : exitCodeFor(error.reason);
  }
}
