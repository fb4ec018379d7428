import type { Tx } from "../database/transaction";
import { WORK_GRAPH_ACTOR } from "../domain/expiry";

/**
 * Rule 11 (repeated expiry goes to a person): for each given item (locked by the caller, which
 * has just recorded an expiry on it), when its last `max` (WORK_GRAPH_MAX_EXPIRIES; 0 = off) leases all ended
 * `expired` after its latest attention request, leaving out `returned` leases (rule 16: a hand
 * back neither counts toward nor resets the count), open a blocking `help` request from
 * `work-graph` on the last of them, in the caller's transaction. Called wherever an expiry is
 * recorded for an open item (reclaim and sweep); both hold the item's row lock and an expiry is
 * recorded once, so the request is opened once. The new request itself restarts the count.
 * Returns the items that were sent to a person.
 */
export async function sendRepeatedExpiriesToPerson(tx: Tx, itemIds: string[], max: number): Promise<string[]> {
  if (max === 0 || itemIds.length === 0) return [];
  const opened = await tx.$queryRaw<{ workItemId: string }[]>`
    WITH streak AS (
      SELECT w.id AS work_item_id, w.title, last.lease_ids, last.workers
        FROM work_items w
        CROSS JOIN LATERAL (
          SELECT array_agg(l.id ORDER BY l.epoch) AS lease_ids, array_agg(l.worker_id ORDER BY l.epoch) AS workers, count(*) AS n
            FROM (SELECT id, epoch, worker_id, outcome, ended_at FROM leases
                   WHERE work_item_id = w.id AND outcome IS DISTINCT FROM 'returned'
                   ORDER BY epoch DESC LIMIT ${max}::int) l
           WHERE l.outcome = 'expired'
             AND l.ended_at > COALESCE((SELECT max(a.created_at) FROM attention_requests a WHERE a.work_item_id = w.id), '-infinity')
        ) last
       WHERE w.id = ANY(${itemIds}::text[]) AND w.status = 'open' AND last.n = ${max}::int
    ), asked AS (
      INSERT INTO attention_requests (work_item_id, lease_id, worker_id, kind, question, context, options, blocking)
      SELECT s.work_item_id, s.lease_ids[${max}::int], ${WORK_GRAPH_ACTOR}, 'help',
             format('"%s" (%s): its last %s leases expired without the work being finished (workers: %s). Retry it, or cancel it?',
                    s.title, s.work_item_id, ${max}::int, array_to_string(ARRAY(SELECT DISTINCT unnest(s.workers) ORDER BY 1), ', ')),
             format('Expired leases, oldest first: %s', array_to_string(ARRAY(
               SELECT format('%s (%s)', lease_id, worker) FROM unnest(s.lease_ids, s.workers) AS x(lease_id, worker)), ', ')),
             ARRAY['retry', 'cancel'], true
        FROM streak s
      RETURNING id, work_item_id, lease_id
    ), held AS (
      UPDATE work_items w SET blocking_attention_count = w.blocking_attention_count + 1, updated_at = work_graph_clock()
        FROM asked WHERE w.id = asked.work_item_id
    ), logged AS (
      INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
      SELECT asked.work_item_id, 'attention.requested', ${WORK_GRAPH_ACTOR}, asked.lease_id, l.epoch,
             jsonb_build_object('requestId', asked.id, 'kind', 'help', 'blocking', true, 'cause', 'repeated_expiry',
                                'expiredLeases', to_jsonb(s.lease_ids), 'workers', to_jsonb(s.workers))
        FROM asked JOIN streak s ON s.work_item_id = asked.work_item_id JOIN leases l ON l.id = asked.lease_id
    )
    SELECT work_item_id AS "workItemId" FROM asked`;
  return opened.map((row) => row.workItemId);
}
