import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { idempotencyScope } from "../domain/idempotency";
import { HOLD_FOR_ATTENTION } from "../domain/readiness";
import type { AttentionKind, AttentionRequest, Lease, WorkItem } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toAttentionRequest, toLease } from "../domain/views";
import { notFound, WorkGraphError } from "../errors";
import { countAttentionAnswered } from "../metrics";
import { attentionItemOf, insertAttentionRequest, releaseAttentionHold, resolveIfOpen } from "../sql/attention";
import { appendEvents } from "../sql/events";
import { lockCurrentLease, lockItem } from "../sql/fencing";
import { idempotent } from "./idempotent";
import { endLease } from "../sql/leases";
import { selectWorkItem } from "../sql/work-items";
import { refuseAttentionOutsideScope } from "../sql/visibility";
import { cancelWhereLeaseEnded } from "./lease-end-cancellation";

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

/**
 * A worker asks a human. Blocking (the default) ends the lease as `attention_requested` in the
 * same transaction (rule 6 (blocking attention ends the lease)) and holds the item in `needs_attention` until every blocking
 * request on it is resolved; a non-blocking request leaves the lease and readiness alone.
 */
export async function requestAttention(db: Db, caller: Caller, input: AttentionInput): Promise<{ request: AttentionRequest; endedLease: Lease | null }> {
  return inTransaction(db, (tx) =>
    idempotent(tx, idempotencyScope(caller, input.workerId), input.idempotencyKey, "attention.request", input, async () => {
      const { lease } = await lockCurrentLease(tx, caller, input.leaseId, input.epoch, input.workerId);
      const blocking = input.blocking ?? true;
      const request = await insertAttentionRequest(tx, lease, {
        kind: input.kind, question: input.question, context: input.context ?? null, options: input.options ?? [], blocking,
      });
      await appendEvents(tx, [{
        workItemId: lease.workItemId,
        type: "attention.requested",
        actor: lease.workerId,
        leaseId: lease.id,
        epoch: lease.epoch,
        data: { requestId: request.id, kind: input.kind, blocking },
      }]);
      const endedLease = blocking
        ? toLease(await endLease(tx, lease, "attention_requested", lease.workerId, { requestId: request.id }, HOLD_FOR_ATTENTION))
        : null;
      if (endedLease) await cancelWhereLeaseEnded(tx, [lease.workItemId]);
      return { request: toAttentionRequest(request), endedLease };
    }),
  );
}

/**
 * A human answers, once. When the last blocking request on the item is resolved its readiness
 * is the normal one again, and its previous worker gets the continuity preference (rule 9 (continuity)).
 */
export async function resolveAttention(
  db: Db,
  caller: Caller,
  input: { id: string; resolution: string; idempotencyKey?: string },
): Promise<{ request: AttentionRequest; workItem: WorkItem }> {
  return inTransaction(db, (tx) =>
    idempotent(tx, idempotencyScope(caller), input.idempotencyKey, "attention.resolve", input, async () => {
      await refuseAttentionOutsideScope(tx, caller, input.id);
      const workItemId = await attentionItemOf(tx, input.id);
      if (!workItemId) throw notFound("attention request", input.id);
      await lockItem(tx, workItemId);
      const request = await resolveIfOpen(tx, input.id, input.resolution, caller.actor, caller.person?.name ?? caller.displayName ?? null);
      if (!request) {
        throw new WorkGraphError("ALREADY_RESOLVED", `attention request ${input.id} is already resolved`, { id: input.id });
      }
      countAttentionAnswered(tx, request);
      if (request.blocking) await releaseAttentionHold(tx, workItemId);
      await appendEvents(tx, [
        { workItemId, type: "attention.resolved", actor: caller.actor, data: { requestId: input.id, resolution: input.resolution } },
      ]);
      return { request: toAttentionRequest(request), workItem: (await selectWorkItem(tx, workItemId))! };
    }),
  );
}
