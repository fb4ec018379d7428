import { z } from "zod";
import { ATTENTION_KINDS, LEASE_OUTCOMES, OWNED_WEBHOOK_FORMATS, ROLES, STAGES, WEBHOOK_FORMATS } from "./constants";

/**
 * What every procedure answers, as zod schemas: the OpenAPI document (server/http/openapi.ts)
 * publishes them as response schemas, and the API's types (WorkItem, Lease, …) are their
 * `z.output`. The routers return plain TypeScript values, so server/trpc/root.ts checks these
 * against the routers' output types at compile time (both ways); a new procedure needs its
 * line in `outputs` or the build fails.
 */

const time = z.iso.datetime();
const stage = z.enum(STAGES);
const outcome = z.enum(LEASE_OUTCOMES);

const lease = z.object({
  id: z.string(),
  workItemId: z.string(),
  workerId: z.string(),
  epoch: z.number().int(),
  acquiredAt: time,
  expiresAt: time,
  renewedAt: time.nullable(),
  endedAt: time.nullable(),
  outcome: outcome.nullable(),
});

const workItem = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  parentId: z.string().nullable(),
  status: z.enum(["open", "released", "cancelled"]),
  stage,
  priority: z.number().int(),
  dependsOn: z.array(z.string()),
  openChildCount: z.number().int(),
  currentLease: lease.nullable(),
  previousWorkerId: z.string().nullable(),
  projectId: z.string(),
  requires: z.array(z.string()),
  concurrencyKey: z.string().nullable(),
  notBefore: time.nullable(),
  externalId: z.string().nullable(),
  createdAt: time,
  updatedAt: time,
});

const attentionRequest = z.object({
  id: z.string(),
  workItemId: z.string(),
  leaseId: z.string(),
  workerId: z.string(),
  kind: z.enum(ATTENTION_KINDS),
  question: z.string(),
  context: z.string().nullable(),
  options: z.array(z.string()),
  blocking: z.boolean(),
  status: z.enum(["open", "resolved"]),
  resolution: z.string().nullable(),
  resolvedBy: z.string().nullable(),
  resolvedByName: z.string().nullable(),
  createdAt: time,
  resolvedAt: time.nullable(),
});

const note = z.object({
  id: z.string(),
  workItemId: z.string(),
  leaseId: z.string(),
  epoch: z.number().int(),
  workerId: z.string(),
  content: z.string(),
  createdAt: time,
});

const event = z.object({
  sequence: z.number().int(),
  workItemId: z.string(),
  type: z.string(),
  actor: z.string(),
  actorName: z.string().nullable(),
  leaseId: z.string().nullable(),
  epoch: z.number().int().nullable(),
  data: z.record(z.string(), z.unknown()),
  createdAt: time,
});

const page = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullable() });

const worker = z.object({
  workerId: z.string(),
  liveLeases: z.number().int(),
  drained: z.boolean(),
  drainReason: z.string().nullable(),
  drainedBy: z.string().nullable(),
  drainedByName: z.string().nullable(),
  lastSeenAt: time.nullable(),
  lastHour: z.object({ claimed: z.number().int(), released: z.number().int(), expired: z.number().int(), revoked: z.number().int() }),
  capabilities: z.array(z.string()),
});

const webhook = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  format: z.enum([...WEBHOOK_FORMATS, ...OWNED_WEBHOOK_FORMATS]),
  label: z.string().nullable(),
  createdAt: time,
  lastDeliveredAt: time.nullable(),
  failing: z.boolean(),
  lastError: z.string().nullable(),
});

const delivery = z.object({
  id: z.string(),
  webhookId: z.string(),
  eventSequence: z.number().int(),
  eventType: z.string(),
  attempts: z.number().int(),
  status: z.enum(["pending", "delivered", "failed"]),
  responseStatus: z.number().int().nullable(),
  responseBody: z.string().nullable(),
  error: z.string().nullable(),
  createdAt: time,
  deliveredAt: time.nullable(),
  nextAttemptAt: time.nullable(),
});

const limitShape = z.object({ key: z.string(), maxLeases: z.number().int(), liveLeases: z.number().int(), updatedAt: time });
const project = z.object({ id: z.string(), name: z.string(), createdAt: time });

const token = z.object({
  id: z.string(),
  role: z.enum(ROLES),
  workerId: z.string().nullable(),
  label: z.string().nullable(),
  projects: z.array(z.string()),
  capabilities: z.array(z.string()),
  createdAt: time,
  revokedAt: time.nullable(),
  lastUsedAt: time.nullable(),
  personId: z.string().nullable(),
  personName: z.string().nullable(),
});

const person = z.object({
  id: z.string(),
  issuer: z.string(),
  subject: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  role: z.enum(ROLES).exclude(["agent"]),
  createdAt: time,
  lastSeenAt: time,
  disabledAt: time.nullable(),
});

const leaseAndItem = z.object({ lease, workItem });
const counts = { claims: z.number().int(), releases: z.number().int(), expiries: z.number().int(), revocations: z.number().int(), attentionRequests: z.number().int() };
const percentiles = {
  readyToClaimP50: z.number().nullable(),
  readyToClaimP90: z.number().nullable(),
  attentionWaitP50: z.number().nullable(),
  attentionWaitP90: z.number().nullable(),
};
const itemRef = z.object({ id: z.string(), title: z.string(), stage });
const ancestorBlocker = itemRef.extend({ ancestorId: z.string() });
const byOutcome = z.object(Object.fromEntries(LEASE_OUTCOMES.map((name) => [name, z.number().int()])) as Record<(typeof LEASE_OUTCOMES)[number], z.ZodNumber>);
const byStage = z.object(Object.fromEntries(STAGES.map((name) => [name, z.number().int()])) as Record<(typeof STAGES)[number], z.ZodNumber>);

const waitingOn = z.discriminatedUnion("stage", [
  z.object({ stage: z.literal("needs_attention"), requests: z.array(z.object({ id: z.string(), question: z.string(), workerId: z.string(), createdAt: time })) }),
  z.object({ stage: z.literal("leased"), lease: z.object({ id: z.string(), workerId: z.string(), epoch: z.number().int(), expiresAt: time }).nullable() }),
  z.object({ stage: z.literal("waiting_on_children"), openChildCount: z.number().int(), children: z.array(itemRef) }),
  z.object({ stage: z.literal("blocked"), dependencies: z.array(itemRef), ancestorBlockers: z.array(ancestorBlocker) }),
  z.object({ stage: z.literal("scheduled"), notBefore: time }),
]);

/** The shapes docs/api.md names: the OpenAPI document shows them as components of these names. */
export const namedShapes = {
  WorkItem: workItem,
  Lease: lease,
  AttentionRequest: attentionRequest,
  Note: note,
  Event: event,
  Worker: worker,
  Webhook: webhook,
  Delivery: delivery,
  Limit: limitShape,
  Project: project,
  Token: token,
  Person: person,
};

/** One line per procedure, keyed by its path. */
export const outputs = {
  "health.check": z.object({ ok: z.literal(true), database: z.literal("ok"), now: time }),

  "workItems.create": workItem,
  "workItems.get": workItem,
  "workItems.list": page(workItem),
  "workItems.queue": z.array(workItem),
  "workItems.addDependency": workItem,
  "workItems.removeDependency": workItem,
  "workItems.move": workItem,
  "workItems.update": workItem,
  "workItems.setPriority": workItem,
  "workItems.cancel": workItem,
  "workItems.import": z.object({ created: z.array(workItem), existing: z.array(z.object({ ref: z.string(), id: z.string() })), refs: z.record(z.string(), z.string()) }),

  "leases.claim": z.object({ lease, workItem, attention: z.array(attentionRequest) }).nullable(),
  "leases.renew": lease,
  "leases.release": leaseAndItem,
  "leases.cancel": leaseAndItem,
  "leases.handBack": leaseAndItem,
  "leases.note": note,
  "leases.decompose": z.object({ parent: workItem, children: z.array(workItem), endedLease: lease, childLease: lease.nullable() }),
  "leases.revoke": leaseAndItem,
  "leases.get": lease,
  "leases.active": z.array(lease.extend({ workItemTitle: z.string(), secondsLeft: z.number() })),
  "leases.recent": z.array(lease.extend({ workItemTitle: z.string() })),
  "leases.history": z.array(lease),

  "attention.request": z.object({ request: attentionRequest, endedLease: lease.nullable() }),
  "attention.resolve": z.object({ request: attentionRequest, workItem }),
  "attention.list": page(attentionRequest),
  "attention.get": attentionRequest,
  "attention.wait": attentionRequest,

  "notes.list": page(note),

  "events.list": page(event),
  "events.stream": event,

  "dashboard.summary": z.object({
    stages: byStage,
    activeLeases: z.number().int(),
    openAttention: z.number().int(),
    expiringWithin60s: z.number().int(),
    unroutable: z.number().int(),
    now: time,
  }),
  "dashboard.unroutable": z.object({ items: z.array(z.object({ item: workItem, missing: z.array(z.string()) })), total: z.number().int() }),
  "dashboard.endedLastHour": byOutcome,
  "dashboard.inbox": z.array(attentionRequest.extend({ workItemTitle: z.string(), workItemStage: stage })),
  "dashboard.neighbourhood": z.object({
    ancestors: z.array(itemRef.extend({ depth: z.number().int() })),
    dependencies: z.array(itemRef),
    dependents: z.array(itemRef),
    dependentCount: z.number().int(),
    children: z.array(itemRef),
    childCount: z.number().int(),
    ancestorBlockers: z.array(ancestorBlocker),
    waitingOn: z.array(waitingOn),
  }),
  "dashboard.activity": z.object({
    range: z.enum(["hour", "day", "week"]),
    bucketSeconds: z.number().int(),
    from: time,
    to: time,
    buckets: z.array(z.object({ start: time, end: time, ...counts, ...percentiles })),
    totals: z.object({ ...counts, ...percentiles }),
  }),

  "tokens.create": z.object({ id: z.string(), token: z.string() }),
  "tokens.list": z.array(token),
  "tokens.revoke": z.object({ id: z.string(), revokedAt: time }),

  "workers.list": z.array(worker),
  "workers.drain": worker,
  "workers.undrain": worker,

  "webhooks.create": webhook.extend({ secret: z.string() }),
  "webhooks.list": z.array(webhook),
  "webhooks.delete": z.object({ id: z.string() }),
  "webhooks.deliveries": z.array(delivery),
  "webhooks.test": delivery,

  "limits.set": limitShape,
  "limits.delete": z.object({ key: z.string() }),
  "limits.list": z.array(limitShape),

  "projects.create": project,
  "projects.list": z.array(project),

  "people.list": z.array(person),
  "people.disable": person,
  "people.enable": person,
  "people.me": z.object({ person: z.object({ id: z.string(), name: z.string() }).nullable(), role: z.enum(ROLES), actor: z.string() }),
  "people.createToken": z.object({ id: z.string(), token: z.string() }),
  "people.tokens": z.array(token),
  "people.revokeToken": z.object({ id: z.string(), revokedAt: time }),
} satisfies Record<string, z.ZodType>;

/** Every procedure's path, "router.procedure". */
export type ProcedurePath = keyof typeof outputs;
/** What procedure `Path` answers (an events.stream subscription yields Events). */
export type ProcedureOutput<Path extends ProcedurePath> = z.output<(typeof outputs)[Path]>;

export type WorkItem = z.output<typeof workItem>;
export type Lease = z.output<typeof lease>;
export type AttentionRequest = z.output<typeof attentionRequest>;
export type Note = z.output<typeof note>;
export type WorkGraphEvent = z.output<typeof event>;
export type Worker = z.output<typeof worker>;
export type Webhook = z.output<typeof webhook>;
export type Delivery = z.output<typeof delivery>;
export type Limit = z.output<typeof limitShape>;
export type Project = z.output<typeof project>;
export type Token = z.output<typeof token>;
export type Person = z.output<typeof person>;
/** A page of a list procedure: its items and the cursor of the next page. */
export type Page<Item> = z.output<ReturnType<typeof page<z.ZodType<Item>>>>;
