import type { Db } from "../../db";
import type { WorkGraphEvent } from "@work-graph/contract";
import { toEvent } from "../../domain/views";
import { claimDueDeliveries, type ClaimedRow } from "./statements";
import type { WebhookFormat } from "@work-graph/contract";
import { TEST_EVENT_TYPE } from "./payload";

export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  attempt: number;
  url: string;
  format: WebhookFormat;
  secretCiphertext: string;
  unixSeconds: number;
  event: WorkGraphEvent;
  workItem: { id: string; title: string; stage: string } | null;
  question: string | null;
}

function toClaimed(row: ClaimedRow): ClaimedDelivery {
  const event: WorkGraphEvent =
    row.sequence === null
      ? { sequence: 0, workItemId: "", type: TEST_EVENT_TYPE, actor: "work-graph", actorName: null, leaseId: null, epoch: null, data: {}, createdAt: row.deliveryCreatedAt.toISOString() }
      : toEvent({
          sequence: row.sequence,
          workItemId: row.workItemId!,
          type: row.type,
          actor: row.actor!,
          actorName: row.actorName,
          leaseId: row.leaseId,
          epoch: row.epoch,
          data: row.data ?? {},
          createdAt: row.createdAt!,
        });
  return {
    id: row.id,
    webhookId: row.webhookId,
    attempt: row.attempts,
    url: row.url,
    format: row.format,
    secretCiphertext: row.secretCiphertext,
    unixSeconds: row.unixSeconds,
    event,
    workItem: row.workItemId && row.itemTitle !== null ? { id: row.workItemId, title: row.itemTitle, stage: row.itemStage! } : null,
    question: row.question,
  };
}

/**
 * Claims due deliveries for this instance (statements.ts claimDueDeliveries): at
 * most `max`, at most `perWebhook` minus `busy` (this instance's attempts in flight) per
 * webhook. `capped` says some due ones were left for a webhook that had no free slot.
 */
export async function claimDeliveries(
  db: Db,
  input: { max: number; perWebhook: number; busy: ReadonlyMap<string, number> },
): Promise<{ claimed: ClaimedDelivery[]; capped: boolean }> {
  const rows = await claimDueDeliveries(db, input);
  return { claimed: rows.map(toClaimed), capped: rows.some((row) => row.capped) };
}
