/**
 * `work-graph mcp`: the Work Graph API as MCP tools for coding agents, over stdio. The session
 * owns the leases it obtains (renewed in the background, handed back when the session ends).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { importItem, inputs, projectId as projectIdField, workItemRef, type AttentionRequest, type Lease, type WorkItem } from "@work-graph/contract";
import type { WorkGraphClient } from "../sdk/client";
import { toWorkGraphError, WorkGraphError, type ErrorReason } from "../sdk/errors";
import { SessionLeases } from "../sdk/lease-holder";
import { retryUnanswered } from "../sdk/retry";
import { SERVER_WAIT_LIMIT_SECONDS, waitInSteps } from "../waiting";
import { workflow } from "../workflow";

/** Lease length when `claim` names none: short enough that a crashed session frees its items soon, renewed while it runs. */
export const DEFAULT_LEASE_SECONDS = 300;
const MAX_CLAIM_WAIT_SECONDS = 600;
const MAX_ASK_WAIT_SECONDS = 3600;
/** How often a long wait tells the client it is still busy (clients that honour progress reset their timeout). */
const PROGRESS_EVERY_MS = 10_000;

// The tools' arguments are the API's fields (the contract's schemas, with the API's limits); the
// lease fields are the session's, and waits may be longer than one request's (taken in steps).
const itemId = workItemRef.describe("work item id");
const projectId = projectIdField.describe("project id");
const claimInput = inputs["leases.claim"].unwrap().shape;
const createInput = inputs["workItems.create"].shape;
const askInput = inputs["attention.request"].shape;

interface Progress {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (notification: { method: "notifications/progress"; params: { progressToken: string | number; progress: number; message?: string } }) => Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// text a model reads

const seconds = (from: string, to: string) => Math.round((Date.parse(to) - Date.parse(from)) / 1000);

function itemText(item: WorkItem): string {
  const policy = [
    `project ${item.projectId}`,
    ...(item.requires.length ? [`requires ${item.requires.join(", ")}`] : []),
    ...(item.concurrencyKey ? [`concurrency key ${item.concurrencyKey}`] : []),
    ...(item.notBefore ? [`not before ${item.notBefore}`] : []),
  ];
  return [
    `${item.id} - ${item.title}`,
    `stage ${item.stage}, priority ${item.priority}${item.parentId ? `, parent ${item.parentId}` : ""}${item.dependsOn.length ? `, depends on ${item.dependsOn.join(", ")}` : ""}${item.openChildCount ? `, ${item.openChildCount} open children` : ""}`,
    policy.join(", "),
    ...(item.description ? [item.description] : []),
  ].join("\n");
}

const leaseText = (lease: Lease) =>
  `lease epoch ${lease.epoch}, ${seconds(lease.renewedAt ?? lease.acquiredAt, lease.expiresAt)} s, renewed in the background by this session`;

function answersText(requests: AttentionRequest[]): string[] {
  if (requests.length === 0) return [];
  return [
    "Questions asked on it before (read the answers before you continue):",
    ...requests.map((request) => `- [${request.kind}] ${request.question}\n  answer: ${request.status === "resolved" ? `${request.resolution} (by ${request.resolvedBy})` : "not answered yet"}`),
  ];
}

const ok = (text: string, structured: Record<string, unknown>): CallToolResult => ({ content: [{ type: "text", text }], structuredContent: structured });

/** A refused or failed call as a tool error: the reason first, then what the agent should do. */
function failure(thrown: unknown, workItemId?: string): CallToolResult {
  const error = toWorkGraphError(thrown);
  const item = workItemId ?? "the item";
  const advice: Partial<Record<ErrorReason, string>> = {
    LEASE_NOT_CURRENT: error.detail.local && error.detail.kind === "unknown"
      ? `This session never claimed ${item}: do not work on it. Claim it first (claim { workItemId: "${item}" }) if you mean to.`
      : `Your lease on ${item} is gone. Stop working on ${item} now and write nothing more about it; it may be someone else's now. Claim other work (queue, claim).`,
    NOT_CLAIMABLE: `${item} cannot be claimed now${error.detail.stage ? ` (it is ${String(error.detail.stage)}${typeof error.detail.notBefore === "string" ? ` until ${error.detail.notBefore}` : ""})` : ""}${
      Array.isArray(error.detail.missing) && error.detail.missing.length ? `: it requires ${error.detail.missing.join(", ")}, which this worker lacks` : ""}. Pick another item from queue.`,
    LIMIT_REACHED: `${item}'s concurrency key ${String(error.detail.key)} is full (${String(error.detail.liveLeases)} of ${String(error.detail.maxLeases)} live leases). Pick another item from queue, or claim it later.`,
    WORKER_DRAINED: "An operator drained this worker: finish the items you hold, claim nothing new.",
    VALIDATION: "Fix the arguments and call again.",
    NOT_FOUND: "Check the id (queue and show list real ids).",
    ALREADY_TERMINAL: `${item} is already finished: move on.`,
    UNAUTHENTICATED: "The token in this MCP server's configuration (WORK_GRAPH_TOKEN) is missing, wrong or revoked: tell the user.",
    FORBIDDEN: "This token may not do that: tell the user if it is needed.",
    NETWORK: "The Work Graph server did not answer (WORK_GRAPH_URL): retry in a little while, or tell the user.",
    UNAVAILABLE: "The Work Graph server is temporarily unavailable: retry in a little while.",
    INTERNAL: "The Work Graph server failed: retry once, then tell the user.",
  };
  const kind = error.leaseKind ? ` (${error.leaseKind})` : "";
  const text = `${error.reason}${kind}: ${error.message}${advice[error.reason] ? `\n${advice[error.reason]}` : ""}`;
  return {
    isError: true,
    content: [{ type: "text", text }],
    structuredContent: { error: { reason: error.reason, message: error.message, detail: error.detail } },
  };
}

// ---------------------------------------------------------------------------------------------
// waiting

/** Sends a progress notification every PROGRESS_EVERY_MS while `work` runs, when the client asked for progress. */
async function withProgress<T>(extra: Progress, what: string, work: () => Promise<T>): Promise<T> {
  const token = extra._meta?.progressToken;
  if (token === undefined) return work();
  let beats = 0;
  const timer = setInterval(() => {
    beats += 1;
    void extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: beats, message: `${what} (${beats * PROGRESS_EVERY_MS / 1000} s)` } }).catch(() => {});
  }, PROGRESS_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * Waits on the server (`attention.wait`, woken when the answer is committed) for up to
 * `waitSeconds`; returns the request as last seen. Aborting the tool call ends the wait at once.
 */
async function waitForAnswer(client: WorkGraphClient, asked: AttentionRequest, waitSeconds: number, signal: AbortSignal): Promise<AttentionRequest> {
  let latest = asked;
  try {
    await waitInSteps(waitSeconds, async (seconds) => {
      latest = await retryUnanswered(() => client.attention.wait.query({ id: asked.id, timeoutSeconds: Math.max(1, seconds) }, { signal }));
      return latest.status === "resolved" ? latest : null;
    }, signal);
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  return latest;
}

// ---------------------------------------------------------------------------------------------
// the server

export interface McpOptions {
  client: WorkGraphClient;
  version?: string;
  /** The session's project for queue, claim and create when a call names none (`WORK_GRAPH_PROJECT`). */
  projectId?: string;
  /** The session's claim capabilities (a subset of the token's); default: the token's, decided by the server. */
  capabilities?: string[];
}

export function createMcpServer({ client, version = "0.1.0", projectId: sessionProject, capabilities }: McpOptions) {
  const leases = new SessionLeases(client, { renewInBackground: true });
  const server = new McpServer({ name: "work-graph", version }, { instructions: workflow("mcp") });

  server.registerTool("queue", {
    title: "Ready queue",
    description: "List the work items that are ready for you, in the exact order your next claim would take them: only items your capabilities cover, whose concurrency key has room. Use it to see what there is to do before claiming. Returns id, title and priority per item.",
    inputSchema: {
      limit: inputs["workItems.queue"].unwrap().shape.limit.unwrap().optional().describe("how many items (default 20)"),
      projectId: projectId.optional().describe(`only this project's items${sessionProject ? ` (default ${sessionProject})` : " (default: every project you may see)"}`),
    },
    annotations: { readOnlyHint: true },
  }, async ({ limit, projectId }) => {
    try {
      const items = await client.workItems.queue.query({ limit: limit ?? 20, projectId: projectId ?? sessionProject, capabilities });
      const text = items.length === 0
        ? "Nothing is ready to claim."
        : items.map((item, index) => `${index + 1}. ${item.id} - ${item.title} (priority ${item.priority}${item.requires.length ? `, requires ${item.requires.join(", ")}` : ""})`).join("\n");
      return ok(text, { items });
    } catch (error) {
      return failure(error);
    }
  });

  server.registerTool("claim", {
    title: "Claim a work item",
    description: "Take a work item to work on: the next ready one you can take (its required capabilities are among your token's), the named one (workItemId) or the next ready child of parentId. You get a lease that this session renews in the background until you finish the item with release, cancel, decompose, hand_back or a blocking ask. Returns the item, your lease and the answers people gave to questions asked on it earlier - read them. If nothing is ready it says so (pass waitSeconds to wait for work). NOT_CLAIMABLE or LIMIT_REACHED: pick another item. WORKER_DRAINED: claim nothing new.",
    inputSchema: {
      workItemId: itemId.optional().describe("claim this item (it must be ready)"),
      parentId: itemId.optional().describe("claim the next ready child of this item"),
      projectId: projectId.optional().describe(`claim only in this project${sessionProject ? ` (default ${sessionProject})` : " (default: any project you may see)"}`),
      durationSeconds: claimInput.durationSeconds.unwrap().optional().describe(`lease length in seconds (default ${DEFAULT_LEASE_SECONDS}); renewed automatically`),
      waitSeconds: z.number().int().min(0).max(MAX_CLAIM_WAIT_SECONDS).optional().describe("when nothing is ready, wait up to this long for an item (default 0)"),
    },
  }, async ({ workItemId, parentId, projectId, durationSeconds, waitSeconds }, extra) => {
    const duration = durationSeconds ?? DEFAULT_LEASE_SECONDS;
    // A named item, or a child of a named parent, is claimed in its own project: the session's project narrows only next-claims.
    const project = projectId ?? (workItemId || parentId ? undefined : sessionProject);
    try {
      const claimed = await withProgress(extra, "waiting for a ready item", () => waitInSteps(waitSeconds ?? 0, async (seconds) => {
        const sentAt = performance.now();
        const input = {
          workItemId, parentId, projectId: project, capabilities, durationSeconds: duration, waitSeconds: seconds, idempotencyKey: globalThis.crypto.randomUUID(),
        };
        const result = await retryUnanswered(() => client.leases.claim.mutate(input));
        return result ? { result, sentAt } : null;
      }, extra.signal));
      if (!claimed) return ok("Nothing is ready to claim right now. Try again later, or claim with waitSeconds to wait for work.", { claimed: false });
      const { lease, workItem, attention } = claimed.result;
      leases.hold(lease, duration, claimed.sentAt);
      const text = [
        `Claimed ${itemText(workItem)}`,
        `(${leaseText(lease)})`,
        ...answersText(attention),
        "Work on it now; note progress as you go; finish with release (or ask, decompose, cancel; hand_back if you cannot do it).",
      ].join("\n");
      return ok(text, { claimed: true, workItem, lease, attention });
    } catch (error) {
      return failure(error, workItemId);
    }
  });

  server.registerTool("show", {
    title: "Show a work item",
    description: "Read one work item: its stage, description, dependencies, notes, the questions asked on it with their answers, and whether this session holds its lease. Use it to check on an item or to read an answer.",
    inputSchema: { workItemId: itemId },
    annotations: { readOnlyHint: true },
  }, async ({ workItemId }) => {
    try {
      const [item, notes, attention] = await Promise.all([
        client.workItems.get.query({ id: workItemId }),
        client.notes.list.query({ workItemId, limit: 50 }),
        client.attention.list.query({ workItemId, limit: 50 }),
      ]);
      const held = leases.status(workItemId);
      const holding = held.state === "held"
        ? `This session holds its lease (epoch ${held.epoch}).`
        : held.state === "lost" ? "This session's lease on it is gone: do not work on it." : "This session holds no lease on it.";
      const text = [
        itemText(item),
        holding,
        ...(notes.items.length ? ["Notes:", ...notes.items.map((note) => `- ${note.workerId} (epoch ${note.epoch}): ${note.content}`)] : []),
        ...answersText(attention.items),
      ].join("\n");
      return ok(text, { workItem: item, notes: notes.items, attention: attention.items, sessionHoldsLease: held.state === "held" });
    } catch (error) {
      return failure(error, workItemId);
    }
  });

  server.registerTool("note", {
    title: "Add a progress note",
    description: "Record progress on an item you claimed in this session: what you did, found or decided. Notes are the item's history for people and later agents. Fails with LEASE_NOT_CURRENT when your lease is gone: then stop working on the item.",
    inputSchema: { workItemId: itemId, content: inputs["leases.note"].shape.content.describe("the note") },
  }, async ({ workItemId, content }) => {
    try {
      const key = globalThis.crypto.randomUUID();
      const note = await leases.write(workItemId, (lease) =>
        retryUnanswered(() => client.leases.note.mutate({ ...lease, content, idempotencyKey: key })), () => false);
      return ok(`Noted on ${workItemId}.`, { note });
    } catch (error) {
      return failure(error, workItemId);
    }
  });

  server.registerTool("release", {
    title: "Finish a work item",
    description: "Mark an item you claimed in this session as done. Give evidence: what was done and how it was verified (tests run, links to commits or pull requests). Your lease ends. Fails with LEASE_NOT_CURRENT when your lease is gone: then stop, the work may belong to someone else now.",
    inputSchema: {
      workItemId: itemId,
      evidence: inputs["leases.release"].shape.evidence.describe("what was done and how it was verified"),
      links: inputs["leases.release"].shape.links.describe("URLs of commits, pull requests, documents"),
    },
  }, async ({ workItemId, evidence, links }) => {
    try {
      const result = await leases.write(workItemId, (lease) =>
        client.leases.release.mutate({ ...lease, evidence, links }), () => true);
      return ok(`Released ${workItemId}: it is done (lease epoch ${result.lease.epoch} ended).`, { workItem: result.workItem, lease: result.lease });
    } catch (error) {
      return failure(error, workItemId);
    }
  });

  server.registerTool("cancel", {
    title: "Cancel a work item",
    description: "Cancel an item you claimed in this session because it should not be done (duplicate, obsolete, wrong). Give the reason. Its open descendants are cancelled too and your lease ends. Use release instead when the work was done.",
    inputSchema: { workItemId: itemId, reason: inputs["leases.cancel"].shape.reason.describe("why it should not be done") },
    annotations: { destructiveHint: true },
  }, async ({ workItemId, reason }) => {
    try {
      const result = await leases.write(workItemId, (lease) =>
        client.leases.cancel.mutate({ ...lease, reason }), () => true);
      return ok(`Cancelled ${workItemId} (lease epoch ${result.lease.epoch} ended).`, { workItem: result.workItem, lease: result.lease });
    } catch (error) {
      return failure(error, workItemId);
    }
  });

  server.registerTool("hand_back", {
    title: "Hand a work item back",
    description: "Give back an item you claimed in this session that you cannot do - not a question for a person: a tool, access or capability you lack, a rate limit or an outage (pass retryAfterSeconds so nobody takes it before then), or you must stop now. Give the reason. Your lease ends at once (outcome returned) and the item is ready for another worker, with no preference for you. Use ask instead when a person must decide or grant something, cancel when it should not be done at all, release when it is done.",
    inputSchema: {
      workItemId: itemId,
      reason: inputs["leases.handBack"].shape.reason.describe("why you cannot do it, for the next worker and the operators"),
      retryAfterSeconds: inputs["leases.handBack"].shape.retryAfterSeconds.describe("keep it unclaimable this long (e.g. until a rate limit resets)"),
    },
  }, async ({ workItemId, reason, retryAfterSeconds }) => {
    try {
      const result = await leases.handBack(workItemId, { reason, retryAfterSeconds });
      const when = result.workItem.stage === "scheduled" && result.workItem.notBefore ? ` (claimable again from ${result.workItem.notBefore})` : "";
      const ended = result.lease.outcome ? `ended, ${result.lease.outcome}` : `expires ${result.lease.expiresAt}`; // an older server: shortened
      return ok(`Handed ${workItemId} back (lease epoch ${result.lease.epoch} ${ended}). It is ${result.workItem.stage}${when}. Stop working on it; claim other work.`,
        { workItem: result.workItem, lease: result.lease });
    } catch (error) {
      return failure(error, workItemId);
    }
  });

  server.registerTool("decompose", {
    title: "Split a work item into children",
    description: "Split an item you claimed in this session into child items when it is too big for one go. Children may depend on each other by id (dependsOn). Your lease on the parent ends; the parent waits until its children are finished and must then be claimed and released itself. With claimChildId you get the lease on that child at once and continue with it.",
    inputSchema: {
      workItemId: itemId,
      children: inputs["leases.decompose"].shape.children.describe("the children: each a title, and optionally an id (generated when omitted), description, priority and the ids it waits for (dependsOn)"),
      claimChildId: itemId.optional().describe("claim this child right away"),
    },
  }, async ({ workItemId, children, claimChildId }) => {
    try {
      const key = globalThis.crypto.randomUUID();
      const sentAt = performance.now();
      const result = await leases.write(workItemId, (lease) => retryUnanswered(() => client.leases.decompose.mutate({
        ...lease, children, claimChildId, durationSeconds: DEFAULT_LEASE_SECONDS, idempotencyKey: key,
      })), () => true);
      if (result.childLease) leases.hold(result.childLease, DEFAULT_LEASE_SECONDS, sentAt);
      const text = [
        `Split ${workItemId} into ${result.children.map((child) => `${child.id} (${child.stage})`).join(", ")}. Your lease on ${workItemId} ended.`,
        ...(result.childLease ? [`You now hold ${result.childLease.workItemId} (${leaseText(result.childLease)}): work on it.`] : []),
      ].join("\n");
      return ok(text, { parent: result.parent, children: result.children, childLease: result.childLease });
    } catch (error) {
      return failure(error, workItemId);
    }
  });

  server.registerTool("ask", {
    title: "Ask a person",
    description: "Ask a person a question about an item you claimed in this session: a decision, an authority or access you lack, a review, help, or a scope question. Blocking (the default): your lease ends and the item waits for the answer - stop working on it. With waitSeconds (up to 3600) this tool waits for the answer and, when it comes, claims the item again for you and returns the answer with your new lease: then continue the work. If no answer comes in time it says so; the item stays with the person, so do other work and claim it later (claim shows the answer). blocking: false only records the question and you keep your lease.",
    inputSchema: {
      workItemId: itemId,
      question: askInput.question.describe("what you need from a person, answerable on its own"),
      kind: askInput.kind.optional().describe("decision (default), authority, access, review, help or scope"),
      options: askInput.options.describe("choices to pick from, if any"),
      context: askInput.context.describe("what the person needs to know to answer"),
      blocking: askInput.blocking.unwrap().optional().describe("default true: your lease ends and the item waits for the answer"),
      waitSeconds: z.number().int().min(0).max(MAX_ASK_WAIT_SECONDS).optional().describe("wait this long for the answer (default 0: return at once)"),
    },
  }, async ({ workItemId, question, kind, options, context, blocking, waitSeconds }, extra) => {
    try {
      const askDeadline = Date.now() + (waitSeconds ?? 0) * 1000;
      const key = globalThis.crypto.randomUUID();
      const asked = await leases.write(workItemId, (lease) => retryUnanswered(() => client.attention.request.mutate({
        ...lease, kind: kind ?? "decision", question, options, context, blocking: blocking ?? true, idempotencyKey: key,
      })), (result) => result.endedLease !== null);
      const { request } = asked;
      const ended = asked.endedLease !== null;
      if (!waitSeconds) {
        const text = ended
          ? `Asked (request ${request.id}). Your lease on ${workItemId} ended: stop working on it. Once answered it is ready again; claim it then (claim shows the answer).`
          : `Asked (request ${request.id}, non-blocking). You still hold ${workItemId}: keep working.`;
        return ok(text, { request, answered: false });
      }
      const answer = await withProgress(extra, "waiting for a person's answer", () => waitForAnswer(client, request, waitSeconds, extra.signal));
      if (answer.status !== "resolved" || extra.signal.aborted) {
        const text = ended
          ? `No answer within ${waitSeconds} s (request ${request.id}). Your lease on ${workItemId} has ended; the item waits for the person. Do other work; later, claim { workItemId: "${workItemId}" } shows the answer once it is there.`
          : `No answer within ${waitSeconds} s (request ${request.id}). You still hold ${workItemId}: keep working; show { workItemId } gives the answer later.`;
        return ok(text, { request: answer, answered: false });
      }
      if (!ended) return ok(`Answer: ${answer.resolution} (by ${answer.resolvedBy}). You still hold ${workItemId}: continue.`, { request: answer, answered: true });
      const sentAt = performance.now();
      try {
        // Answered, the item is ready again unless something else still holds it back (another open
        // blocking question): then the claim waits for it on the server, within what is left of waitSeconds.
        const secondsLeft = Math.max(0, Math.min(SERVER_WAIT_LIMIT_SECONDS, (askDeadline - Date.now()) / 1000));
        const reclaim = { workItemId, durationSeconds: DEFAULT_LEASE_SECONDS, waitSeconds: secondsLeft, idempotencyKey: globalThis.crypto.randomUUID() };
        const claimed = await retryUnanswered(() => client.leases.claim.mutate(reclaim));
        if (!claimed) throw new Error(`${workItemId} could not be claimed`);
        leases.hold(claimed.lease, DEFAULT_LEASE_SECONDS, sentAt);
        const text = [
          `Answer: ${answer.resolution} (by ${answer.resolvedBy}).`,
          `You hold ${workItemId} again (${leaseText(claimed.lease)}): continue the work with this answer.`,
        ].join("\n");
        return ok(text, { request: answer, answered: true, workItem: claimed.workItem, lease: claimed.lease });
      } catch (thrown) {
        const error = toWorkGraphError(thrown);
        const text = `Answer: ${answer.resolution} (by ${answer.resolvedBy}).\nBut ${workItemId} could not be claimed again (${error.reason}: ${error.message}): do not work on it; pick other work.`;
        return ok(text, { request: answer, answered: true, workItem: null, lease: null, claimError: { reason: error.reason, message: error.message } });
      }
    } catch (error) {
      return failure(error, workItemId);
    }
  });

  const planItem = importItem.extend({
    ref: importItem.shape.ref.describe("a name for the item within this list, for parent and dependsOn"),
    parent: importItem.shape.parent.describe("the ref of its parent in this list, or an existing item's id"),
    dependsOn: importItem.shape.dependsOn.describe("refs in this list or existing ids it waits for"),
    externalId: importItem.shape.externalId.describe("its id elsewhere: an item with it already is not created again"),
  });
  server.registerTool("create", {
    title: "Create a work item, or a small plan",
    description: "Add a new work item, for example follow-up work you discovered that should not be done as part of your current item. It joins the queue (or waits for its dependencies, or its notBefore time). Returns the new item's id and stage. "
      + "Or pass `items` (up to 100) instead of `title` to create a small plan at once, all or nothing: each item has a `ref`, and `parent`/`dependsOn` name other refs of the list or existing ids. "
      + "Plans are imported with workItems.import, which is an operator's: with an agent token `items` answers FORBIDDEN (create the items one by one, or ask a person to import the plan).",
    inputSchema: {
      title: createInput.title.optional().describe("the item's title (or give items)"),
      description: createInput.description,
      parentId: createInput.parentId.describe("make it a child of this item (it is then in the parent's project)"),
      dependsOn: createInput.dependsOn.describe("ids it waits for"),
      priority: createInput.priority.describe("higher first (default 0)"),
      projectId: createInput.projectId.describe(`its project${sessionProject ? ` (default ${sessionProject})` : ""}`),
      requires: createInput.requires.describe("capabilities a worker needs to claim it, e.g. [\"browser\"]"),
      concurrencyKey: createInput.concurrencyKey.describe("a key whose limit caps how many such items are worked on at once"),
      notBefore: createInput.notBefore.describe("not claimable before this time (ISO-8601 with offset)"),
      delaySeconds: createInput.delaySeconds.describe("not claimable for this many seconds"),
      items: z.array(planItem).min(1).max(100).optional().describe("a small plan instead of one item (then give no title)"),
    },
  }, async ({ title, description, parentId, dependsOn, priority, projectId, requires, concurrencyKey, notBefore, delaySeconds, items }) => {
    try {
      if ((title === undefined) === (items === undefined)) return failure(new WorkGraphError("VALIDATION", "give either title (one item) or items (a plan)"));
      if (items) {
        const input = { projectId: projectId ?? sessionProject, items, idempotencyKey: globalThis.crypto.randomUUID() };
        const result = await retryUnanswered(() => client.workItems.import.mutate(input));
        const lines = result.created.map((item) => `${item.id} (${item.stage}) ${item.title}`);
        const existing = result.existing.map((entry) => `${entry.id} (existed already: ${entry.ref})`);
        return ok([`Created ${result.created.length} item(s).`, ...lines, ...existing].join("\n"), result);
      }
      const input = {
        title: title!, description, parentId, dependsOn, priority, requires, concurrencyKey, notBefore, delaySeconds,
        projectId: projectId ?? (parentId ? undefined : sessionProject),
        idempotencyKey: globalThis.crypto.randomUUID(),
      };
      const item = await retryUnanswered(() => client.workItems.create.mutate(input));
      return ok(`Created ${item.id} (${item.stage}).`, { workItem: item });
    } catch (error) {
      return failure(error);
    }
  });

  return { server, leases };
}

/**
 * Serves MCP on stdin/stdout until stdin closes or SIGINT/SIGTERM; then hands the session's
 * live leases back (`leases.handBack`: their items are ready again at once) before returning.
 */
export async function serveMcp(options: McpOptions): Promise<void> {
  const { server, leases } = createMcpServer(options);
  const transport = new StdioServerTransport();
  let finish!: () => void;
  const ended = new Promise<void>((resolve) => (finish = resolve));
  const end = () => finish();
  process.stdin.once("end", end);
  process.stdin.once("close", end);
  process.once("SIGINT", end);
  process.once("SIGTERM", end);
  process.stdout.once("error", end); // the client went away mid-answer (EPIPE)
  transport.onclose = end;
  await server.connect(transport);
  await ended;
  await server.close().catch(() => {}); // aborts tool calls in progress: their waits end now
  await leases.handBackAll();
  process.off("SIGINT", end);
  process.off("SIGTERM", end);
  process.stdin.destroy();
}
