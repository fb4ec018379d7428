import { z } from "zod";
import { ATTENTION_KINDS, CAPABILITY_PATTERN, PROJECT_ID_PATTERN, ROLES, STAGES, WEBHOOK_FORMATS, WORK_ITEM_ID } from "./constants";

/*
 * What every procedure accepts, as the zod schemas its router validates with (`inputs`, keyed
 * by procedure path), and the field schemas they are made of, for the MCP server's tools and
 * other clients that offer a part of an input.
 */

// PostgreSQL text cannot hold NUL, and an unpaired UTF-16 surrogate is not Unicode text.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The one string schema of every API input: refuses NUL and lone surrogates with VALIDATION
 * naming the field (the issue path), before anything reaches the database.
 */
export const safeString = () =>
  z.string().refine((value) => !UNSTORABLE.test(value), { message: "must not contain NUL characters or unpaired UTF-16 surrogates" });

/** Text that must not be blank, at most `max` characters. */
export const text = (what: string, max: number) =>
  safeString().max(max).refine((value) => value.trim().length > 0, { message: `${what} must not be blank` });

/** A new item's id: the format of API.md. */
export const newWorkItemId = safeString().regex(WORK_ITEM_ID, "id must match [a-z0-9][a-z0-9._-]{0,99}");
/** A reference to an existing item: any id; an unknown one gets NOT_FOUND. */
export const workItemRef = safeString().min(1).max(200);
export const uuid = safeString().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID");
export const epoch = z.number().int().min(0).max(2_147_483_647);
export const priority = z.number().int().min(-1_000_000_000).max(1_000_000_000);
export const durationSeconds = z.number().int().min(1).max(86_400);
/** How long a request may wait for a commit (API.md "Waiting instead of polling"); fractions allowed. */
export const waitSeconds = z.number().min(0).max(60);
export const idempotencyKey = safeString().min(1).max(200);
export const workerId = safeString().min(1).max(200);
export const title = text("title", 500);
export const description = safeString().max(50_000).nullish();
export const stage = z.enum(STAGES);
export const attentionKind = z.enum(ATTENTION_KINDS);
export const limit = (max: number, fallback: number) => z.number().int().min(1).max(max).default(fallback);
const cursor = safeString().max(400).optional();
const attentionStatus = z.enum(["open", "resolved"]);
const order = z.enum(["asc", "desc"]).default("asc");

/** A project id (docs/api.md "Queue policy"). */
export const projectId = safeString().regex(PROJECT_ID_PATTERN, "projectId must match [a-z0-9][a-z0-9-]{0,49}");
/** A capability, a `requires` entry or a concurrency key: the one format of docs/api.md "Queue policy". */
export const capability = safeString().regex(CAPABILITY_PATTERN, "must match [a-z0-9][a-z0-9:._/-]{0,63}");
export const concurrencyKey = capability;
/** A set of capabilities: returned sorted and unique (`requires` is stored that way). */
export const capabilities = z.array(capability).max(16).transform((values) => [...new Set(values)].sort());
/** An absolute time with its offset (ISO-8601), e.g. a `notBefore`. */
export const isoTime = safeString().pipe(z.iso.datetime({ offset: true }));
/** How far ahead a time gate may be set from database now: up to a year. */
export const delaySeconds = z.number().int().min(0).max(31_536_000);
export const externalId = safeString().min(1).max(200);
const dependsOn = z.array(workItemRef).max(100);
/** API.md calls the optional idempotency key `idempotencyKey`; `key` is accepted as a short alias. */
const keyed = { idempotencyKey: idempotencyKey.optional(), key: idempotencyKey.optional() };

/** The lease a call acts under: its id and epoch (the fence), and for an admin acting for an agent its worker. */
export const leaseRef = { leaseId: uuid, epoch, workerId: workerId.optional() };

/** One child of leases.decompose. */
export const childSpec = z.object({
  id: newWorkItemId.optional(),
  title,
  description,
  priority: priority.optional(),
  dependsOn: dependsOn.optional(),
  requires: capabilities.optional(),
  concurrencyKey: concurrencyKey.nullish(),
  notBefore: isoTime.optional(),
  delaySeconds: delaySeconds.optional(),
});

/** One item of workItems.import (docs/api.md "Import"): `parent` and `dependsOn` name refs of the import or existing ids. */
export const importItem = z.object({
  ref: safeString().min(1).max(100),
  id: newWorkItemId.optional(),
  title,
  description,
  parent: workItemRef.optional(),
  dependsOn: dependsOn.optional(),
  priority: priority.optional(),
  requires: capabilities.optional(),
  concurrencyKey: concurrencyKey.nullish(),
  notBefore: isoTime.optional(),
  delaySeconds: delaySeconds.optional(),
  externalId: externalId.optional(),
});
/** An import item as a client writes it (a plan file, a GitHub issue). */
export type ImportItemInput = z.input<typeof importItem>;
/** An import item as the server reads it (capabilities sorted and unique). */
export type ImportItem = z.output<typeof importItem>;

const webhookUrl = safeString()
  .max(2_000)
  .refine((value) => URL.canParse(value), { message: "url must be an absolute URL" })
  .refine((value) => !URL.canParse(value) || ["http:", "https:"].includes(new URL(value).protocol), {
    message: "url must use http or https",
  });

/** An event type ("attention.requested"), a prefix ("attention.*"), or "*". */
const eventPattern = safeString()
  .max(100)
  .regex(/^(\*|[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?)$/, 'an event type such as "lease.ended", a prefix such as "attention.*", or "*"');

const byId = z.object({ id: uuid });
const everything = z.object({}).default({});

/**
 * The input of every procedure that takes one, keyed by its path. Items are validated one by one
 * in workItems.import (so that the bad one is named), hence `items` is a list of anything here.
 */
export const inputs = {
  "workItems.create": z.object({
    id: newWorkItemId.optional(),
    title,
    description,
    parentId: workItemRef.nullish(),
    dependsOn: dependsOn.optional(),
    priority: priority.optional(),
    ...keyed,
    projectId: projectId.optional(),
    requires: capabilities.optional(),
    concurrencyKey: concurrencyKey.nullish(),
    notBefore: isoTime.optional(),
    delaySeconds: delaySeconds.optional(),
    externalId: externalId.optional(),
  }),
  "workItems.import": z.object({
    projectId: projectId.optional(),
    items: z.array(z.unknown()).min(1).max(1000),
    dryRun: z.boolean().default(false),
    ...keyed,
  }),
  "workItems.get": z.object({ id: workItemRef }),
  "workItems.list": z.object({
    stage: z.union([stage, z.array(stage).max(7)]).optional(),
    parentId: workItemRef.optional(),
    search: safeString().max(200).optional(),
    limit: limit(200, 50),
    cursor,
    projectId: projectId.optional(),
    externalId: externalId.optional(),
  }).default({ limit: 50 }),
  "workItems.queue": z.object({ limit: limit(200, 50), workerId: workerId.optional(), projectId: projectId.optional(), capabilities: capabilities.optional() }).default({ limit: 50 }),
  "workItems.addDependency": z.object({ workItemId: workItemRef, dependsOnId: workItemRef, ...keyed }),
  "workItems.removeDependency": z.object({ workItemId: workItemRef, dependsOnId: workItemRef }),
  "workItems.move": z.object({ id: workItemRef, parentId: workItemRef.nullable() }),
  "workItems.update": z.object({
    id: workItemRef,
    title: title.optional(),
    description,
    requires: capabilities.optional(),
    concurrencyKey: concurrencyKey.nullable().optional(),
    notBefore: isoTime.nullable().optional(),
  }),
  "workItems.setPriority": z.object({ id: workItemRef, priority }),
  "workItems.cancel": z.object({ id: workItemRef, reason: text("reason", 10_000) }),

  "leases.claim": z.object({
    workItemId: workItemRef.optional(),
    parentId: workItemRef.optional(),
    durationSeconds: durationSeconds.default(900),
    waitSeconds: waitSeconds.default(0),
    workerId: workerId.optional(),
    ...keyed,
    projectId: projectId.optional(),
    capabilities: capabilities.optional(),
  }).default({ durationSeconds: 900, waitSeconds: 0 }),
  "leases.renew": z.object({ ...leaseRef, durationSeconds: durationSeconds.default(900) }),
  "leases.release": z.object({ ...leaseRef, evidence: text("evidence", 100_000), links: z.array(safeString().min(1).max(2_000)).max(100).optional() }),
  "leases.cancel": z.object({ ...leaseRef, reason: text("reason", 10_000) }),
  "leases.handBack": z.object({ ...leaseRef, reason: text("reason", 10_000), retryAfterSeconds: z.number().int().min(0).max(86_400).optional() }),
  "leases.note": z.object({ ...leaseRef, content: text("content", 100_000), ...keyed }),
  "leases.decompose": z.object({
    ...leaseRef,
    children: z.array(childSpec).min(1).max(100),
    claimChildId: workItemRef.optional(),
    durationSeconds: durationSeconds.optional(),
    ...keyed,
  }),
  "leases.revoke": z.object({ leaseId: uuid, epoch, reason: text("reason", 10_000) }),
  "leases.get": z.object({ leaseId: uuid }),
  "leases.active": z.object({ workerId: workerId.optional(), limit: limit(500, 200), after: uuid.optional(), projectId: projectId.optional() }).default({ limit: 200 }),
  "leases.recent": z.object({ workerId: workerId.optional(), limit: limit(200, 50) }).default({ limit: 50 }),
  "leases.history": z.object({ workItemId: workItemRef }),

  "attention.request": z.object({
    ...leaseRef,
    kind: attentionKind,
    question: text("question", 20_000),
    context: safeString().max(100_000).nullish(),
    options: z.array(safeString().min(1).max(2_000)).max(50).optional(),
    blocking: z.boolean().default(true),
    ...keyed,
  }),
  "attention.resolve": z.object({ id: uuid, resolution: text("resolution", 100_000), ...keyed }),
  "attention.list": z.object({
    status: attentionStatus.optional(),
    workItemId: workItemRef.optional(),
    limit: limit(200, 50),
    cursor,
    projectId: projectId.optional(),
  }).default({ limit: 50 }),
  "attention.get": byId,
  "attention.wait": z.object({ id: uuid, timeoutSeconds: z.number().min(1).max(60).default(30) }),

  "notes.list": z.object({ workItemId: workItemRef, limit: limit(200, 50), cursor, order }),

  "events.list": z.object({
    workItemId: workItemRef.optional(),
    after: z.number().int().min(0).optional(),
    before: z.number().int().min(1).optional(),
    order,
    limit: limit(500, 100),
    projectId: projectId.optional(),
  }).default({ limit: 100, order: "asc" }),
  /** A reconnect's Last-Event-ID arrives as `lastEventId` and wins over `after`. */
  "events.stream": z.object({
    after: z.number().int().min(0).optional(),
    workItemId: workItemRef.optional(),
    types: z.array(safeString().min(1).max(100)).min(1).max(50).optional(),
    lastEventId: safeString().regex(/^\d{1,15}$/, "lastEventId must be an event sequence").optional(),
    projectId: projectId.optional(),
  }).default({}),

  "dashboard.summary": z.object({ projectId: projectId.optional() }).optional(),
  "dashboard.unroutable": z.object({ projectId: projectId.optional(), limit: limit(200, 50) }).default({ limit: 50 }),
  "dashboard.inbox": z.object({ status: attentionStatus, limit: limit(200, 100), projectId: projectId.optional() }),
  "dashboard.neighbourhood": z.object({ id: workItemRef }),
  "dashboard.activity": z.object({ range: z.enum(["hour", "day", "week"]).default("day") }).default({ range: "day" }),

  "tokens.create": z.object({
    role: z.enum(ROLES),
    workerId: workerId.optional(),
    label: safeString().max(200).optional(),
    projects: z.array(projectId).max(100).optional(),
    capabilities: capabilities.optional(),
  }),
  "tokens.revoke": byId,

  "workers.list": everything,
  "workers.drain": z.object({ workerId, reason: safeString().max(2_000).optional() }),
  "workers.undrain": z.object({ workerId }),

  "webhooks.create": z.object({
    url: webhookUrl,
    events: z.array(eventPattern).min(1).max(50).default(["*"]),
    format: z.enum(WEBHOOK_FORMATS).default("json"),
    label: safeString().max(200).optional(),
    projectId: projectId.optional(),
  }),
  "webhooks.delete": byId,
  "webhooks.deliveries": z.object({ webhookId: uuid, limit: limit(200, 50) }),
  "webhooks.test": byId,

  "limits.set": z.object({ key: concurrencyKey, maxLeases: z.number().int().min(0).max(10_000) }),
  "limits.delete": z.object({ key: concurrencyKey }),
  "limits.list": everything,

  "projects.create": z.object({ id: projectId, name: text("name", 200) }),
  "projects.list": everything,

  "people.disable": byId,
  "people.enable": byId,
  "people.createToken": z.object({ label: safeString().max(200).optional() }),
  "people.tokens": z.object({ personId: uuid.optional() }).optional(),
  "people.revokeToken": byId,
} satisfies Record<string, z.ZodType>;

/** The paths of the procedures that take an input. */
export type InputPath = keyof typeof inputs;
/** What a client sends to procedure `Path`. */
export type ProcedureInput<Path extends InputPath> = z.input<(typeof inputs)[Path]>;
