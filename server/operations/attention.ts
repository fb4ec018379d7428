import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { appendEvents } from "../domain/events";
import { endLease } from "../domain/leases";
import { lockCurrentLease, lockItem } from "../domain/fencing";
import { idempotent, idempotencyScope } from "../domain/idempotency";
import type { AttentionKind, AttentionRequest, Caller, Lease, WorkItem } from "../domain/types";
import { ATTENTION_COLUMNS, selectWorkItem, toAttentionRequest, toLease } from "../domain/views";
import { notFound, WorkGraphError } from "../errors";
import { countAttentionAnswered } from "../metrics";

export interface AttentionInput {
  leaseId: string;
  epoch: number;
  kind: AttentionKind;
  question: string;
  context?: string | null;
  options?: string[];
  blocking?: boolean;
  idempotencyKey?: string;
  workerId?: string;
}

type AttentionRow = Parameters<typeof toAttentionRequest>[0];

/**
 * A worker asks a human. Blocking (the default) ends the lease as `attention_requested` in the
 * same transaction (rule 6) and holds the item in `needs_attention` until every blocking
 * request on it is resolved; a non-blocking request leaves the lease and readiness alone.
 */
export async function requestAttention(db: Db, caller: Caller, input: AttentionInput): Promise<{ request: AttentionRequest; endedLease: Lease | null }> {
  return inTransaction(db, (tx) =>
    idempotent(tx, idempotencyScope(caller, input.workerId), input.idempotencyKey, "attention.request", input, async () => {
      const { lease } = await lockCurrentLease(tx, caller, input.leaseId, input.epoch, input.workerId);
      const blocking = input.blocking ?? true;
      const [request] = await tx.$queryRaw<AttentionRow[]>`
        INSERT INTO attention_requests AS a (work_item_id, lease_id, worker_id, kind, question, context, options, blocking)
        VALUES (${lease.workItemId}, ${lease.id}::uuid, ${lease.workerId}, ${input.kind}, ${input.question}, ${input.context ?? null},
                ${input.options ?? []}::text[], ${blocking})
        RETURNING ${ATTENTION_COLUMNS}`;
      await appendEvents(tx, [{
        workItemId: lease.workItemId,
        type: "attention.requested",
        actor: lease.workerId,
        leaseId: lease.id,
        epoch: lease.epoch,
        data: { requestId: request!.id, kind: input.kind, blocking },
      }]);
      const endedLease = blocking
        ? toLease(await endLease(tx, lease, "attention_requested", lease.workerId, { requestId: request!.id },
            Prisma.sql`, blocking_attention_count = w.blocking_attention_count + 1`))
        : null;
      return { request: toAttentionRequest(request!), endedLease };
    }),
  );
}

/**
 * A human answers, once. When the last blocking request on the item is resolved its readiness
 * is the normal one again, and its previous worker gets the continuity preference (rule 9).
 */
export async function resolveAttention(
  db: Db,
  caller: Caller,
  input: { id: string; resolution: string; idempotencyKey?: string },
): Promise<{ request: AttentionRequest; workItem: WorkItem }> {
  return inTransaction(db, (tx) =>
    idempotent(tx, idempotencyScope(caller), input.idempotencyKey, "attention.resolve", input, async () => {
      const [found] = await tx.$queryRaw<{ workItemId: string }[]>`
        SELECT work_item_id AS "workItemId" FROM attention_requests WHERE id = ${input.id}::uuid`;
      if (!found) throw notFound("attention request", input.id);
      await lockItem(tx, found.workItemId);
      const [request] = await tx.$queryRaw<AttentionRow[]>`
        UPDATE attention_requests a SET status = 'resolved', resolution = ${input.resolution}, resolved_by = ${caller.actor},
               resolved_at = clock_timestamp()
         WHERE id = ${input.id}::uuid AND status = 'open'
        RETURNING ${ATTENTION_COLUMNS}`;
      if (!request) {
        throw new WorkGraphError("ALREADY_RESOLVED", `attention request ${input.id} is already resolved`, { id: input.id });
      }
      countAttentionAnswered(tx, request);
      if (request.blocking) {
        await tx.$executeRaw`
          UPDATE work_items SET blocking_attention_count = blocking_attention_count - 1,
                 continuity_worker_id = CASE WHEN blocking_attention_count = 1 THEN previous_worker_id ELSE continuity_worker_id END,
                 continuity_since = CASE WHEN blocking_attention_count = 1 THEN clock_timestamp() ELSE continuity_since END,
                 updated_at = clock_timestamp()
           WHERE id = ${found.workItemId}`;
      }
      await appendEvents(tx, [
        { workItemId: found.workItemId, type: "attention.resolved", actor: caller.actor, data: { requestId: input.id, resolution: input.resolution } },
      ]);
      return { request: toAttentionRequest(request), workItem: (await selectWorkItem(tx, found.workItemId))! };
    }),
  );
}
