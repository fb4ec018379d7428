import { z } from "zod";
import { ATTENTION_KINDS, STAGES } from "../domain/types";
import { WORK_ITEM_ID } from "../domain/ids";

const nonBlank = (what: string, max: number) =>
  z.string().max(max).refine((value) => value.trim().length > 0, { message: `${what} must not be blank` });

/** A new item's id: the format of API.md. */
export const newWorkItemId = z.string().regex(WORK_ITEM_ID, "id must match [a-z0-9][a-z0-9._-]{0,99}");
/** A reference to an existing item: any id; an unknown one gets NOT_FOUND. */
export const workItemRef = z.string().min(1).max(200);
export const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID");
export const epoch = z.number().int().min(0).max(2_147_483_647);
export const priority = z.number().int().min(-1_000_000_000).max(1_000_000_000);
export const durationSeconds = z.number().int().min(1).max(86_400);
/** How long a request may wait for a commit (API.md "Waiting instead of polling"); fractions allowed. */
export const waitSeconds = z.number().min(0).max(60);
export const idempotencyKey = z.string().min(1).max(200);
export const workerId = z.string().min(1).max(200);
export const title = nonBlank("title", 500);
export const description = z.string().max(50_000).nullish();
export const stage = z.enum(STAGES);
export const attentionKind = z.enum(ATTENTION_KINDS);
export const limit = (max: number, fallback: number) => z.number().int().min(1).max(max).default(fallback);
export const text = nonBlank;

export const leaseRef = { leaseId: uuid, epoch, workerId: workerId.optional() };

export const childSpec = z.object({
  id: newWorkItemId.optional(),
  title,
  description,
  priority: priority.optional(),
  dependsOn: z.array(workItemRef).max(100).optional(),
});

/** API.md calls the optional idempotency key `idempotencyKey`; `key` is accepted as a short alias. */
export const withKey = <T extends { idempotencyKey?: string; key?: string }>({ key, ...input }: T) => ({
  ...input,
  idempotencyKey: input.idempotencyKey ?? key,
});
