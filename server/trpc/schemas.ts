import { z } from "zod";
import { ATTENTION_KINDS, CAPABILITY_PATTERN, PROJECT_ID_PATTERN, STAGES } from "../domain/contract";
import { WORK_ITEM_ID } from "../domain/ids";
import { WorkGraphError } from "../errors";

// PostgreSQL text cannot hold NUL, and an unpaired UTF-16 surrogate is not Unicode text.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The one string schema of every API input: refuses NUL and lone surrogates with VALIDATION
 * naming the field (the issue path), before anything reaches the database.
 */
export const safeString = () =>
  z.string().refine((value) => !UNSTORABLE.test(value), { message: "must not contain NUL characters or unpaired UTF-16 surrogates" });

const nonBlank = (what: string, max: number) =>
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
export const title = nonBlank("title", 500);
export const description = safeString().max(50_000).nullish();
export const stage = z.enum(STAGES);
export const attentionKind = z.enum(ATTENTION_KINDS);
export const limit = (max: number, fallback: number) => z.number().int().min(1).max(max).default(fallback);
export const text = nonBlank;

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

export const leaseRef = { leaseId: uuid, epoch, workerId: workerId.optional() };

export const childSpec = z.object({
  id: newWorkItemId.optional(),
  title,
  description,
  priority: priority.optional(),
  dependsOn: z.array(workItemRef).max(100).optional(),
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
  dependsOn: z.array(workItemRef).max(100).optional(),
  priority: priority.optional(),
  requires: capabilities.optional(),
  concurrencyKey: concurrencyKey.nullish(),
  notBefore: isoTime.optional(),
  delaySeconds: delaySeconds.optional(),
  externalId: externalId.optional(),
});

/**
 * An import's items, each checked on its own so that a bad one is named (docs/api.md "Import":
 * VALIDATION with `detail.ref`, or `detail.index` when the item has no usable ref).
 */
export function parseImportItems(items: unknown[]): z.infer<typeof importItem>[] {
  return items.map((raw, index) => {
    const parsed = importItem.safeParse(raw);
    if (parsed.success) return parsed.data;
    const ref = (raw as { ref?: unknown } | null)?.ref;
    const issue = parsed.error.issues[0]!;
    throw new WorkGraphError("VALIDATION", `items[${index}].${issue.path.join(".")}: ${issue.message}`, {
      ref: typeof ref === "string" ? ref : null, index, issues: parsed.error.issues,
    });
  });
}

/** API.md calls the optional idempotency key `idempotencyKey`; `key` is accepted as a short alias. */
export const withKey = <T extends { idempotencyKey?: string; key?: string }>({ key, ...input }: T) => ({
  ...input,
  idempotencyKey: input.idempotencyKey ?? key,
});
