-- Issue 39: every time decision reads the database clock through one of two functions, so a test
-- database can move it (tests/support/clock.ts) and production keeps today's clocks:
-- work_graph_now() is statement_timestamp(), work_graph_clock() is clock_timestamp(). Both are
-- plain SQL bodies that PostgreSQL inlines into the statements that call them.

CREATE OR REPLACE FUNCTION "work_graph_now"() RETURNS TIMESTAMPTZ LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT statement_timestamp()
$$;

CREATE OR REPLACE FUNCTION "work_graph_clock"() RETURNS TIMESTAMPTZ LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT clock_timestamp()
$$;

-- Column defaults that wrote clock_timestamp().
-- AlterTable
ALTER TABLE "api_tokens" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "attention_requests" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "dashboard_sessions" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "dependencies" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "events" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "lease_end_cancellations" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "github_comments" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "github_deliveries" ALTER COLUMN "received_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "idempotency_receipts" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "limits" ALTER COLUMN "updated_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "notes" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "people" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock(),
ALTER COLUMN "last_seen_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "projects" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "slack_messages" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "webhook_deliveries" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "webhooks" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "work_items" ALTER COLUMN "created_at" SET DEFAULT work_graph_clock(),
ALTER COLUMN "updated_at" SET DEFAULT work_graph_clock();

-- AlterTable
ALTER TABLE "worker_drains" ALTER COLUMN "changed_at" SET DEFAULT work_graph_clock();

-- The functions that read the clock (prisma/functions/).
CREATE OR REPLACE FUNCTION "enqueue_webhook_deliveries"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "webhook_deliveries" ("webhook_id", "event_sequence", "event_type", "next_attempt_at")
    SELECT w."id", e."sequence", e."type", work_graph_clock()
      FROM new_events e
      LEFT JOIN "work_items" i ON i."id" = e."work_item_id"
      JOIN "webhooks" w ON w."deleted_at" IS NULL AND "webhook_matches"(w."events", e."type")
     WHERE (w."project_id" IS NULL OR w."project_id" = i."project_id")
       AND (w."format" <> 'github' OR starts_with(i."external_id", 'github:'))
     ORDER BY e."sequence";
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "release_lease"("p_lease" UUID, "p_epoch" INTEGER, "p_worker" TEXT, "p_data" JSONB)
RETURNS JSON LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    "released" JSON;
    "unblocked_any" BOOLEAN;
BEGIN
    PERFORM set_config('work_graph.quiet_events', 'on', true);
    PERFORM lock_for_release("p_lease");

    WITH 
  item AS (SELECT id, parent_id, last_epoch FROM work_items
            WHERE id = (SELECT work_item_id FROM leases WHERE id = "p_lease"::uuid) FOR UPDATE),
    
    l AS (
      UPDATE leases l SET ended_at = work_graph_clock(), outcome = 'released'
        FROM item
       WHERE l.ended_at IS NULL AND 
  l.id = "p_lease"::uuid AND l.epoch = "p_epoch" AND l.work_item_id = item.id AND item.last_epoch = l.epoch
  AND l.ended_at IS NULL AND l.expires_at > work_graph_clock()
  AND l.worker_id = coalesce("p_worker", l.worker_id)
      RETURNING l.*
    ), w AS (
      UPDATE work_items w SET current_lease_id = NULL, lease_expires_at = NULL, previous_worker_id = l.worker_id,
             updated_at = work_graph_clock() , status = 'released'
        FROM l WHERE w.id = l.work_item_id
      RETURNING w.*
    ), lease_ended AS (
      INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
      SELECT l.work_item_id, 'lease.ended', l.worker_id, l.id, l.epoch,
             jsonb_build_object('outcome', l.outcome, 'workerId', l.worker_id) || "p_data" FROM l
      UNION ALL SELECT l.work_item_id, 'work_item.status_changed', l.worker_id, l.id, l.epoch,
                                 jsonb_build_object('from', 'open', 'to', 'released') || "p_data" FROM l
    ),
    done AS (SELECT id, parent_id, updated_at AS at FROM w),
    
  unblocked AS (
    UPDATE work_items d SET open_dependency_count = d.open_dependency_count - 1, updated_at = done.at
      FROM done, dependencies e
     WHERE e.depends_on_id = done.id AND d.id = e.work_item_id
    RETURNING d.id
  ), parent_updated AS (
    UPDATE work_items p SET open_child_count = p.open_child_count - 1, updated_at = done.at
      FROM done WHERE p.id = done.parent_id
    RETURNING p.open_child_count
  )
    SELECT json_build_object('lease', (SELECT row_to_json(x) FROM (SELECT l.id::text AS id, l.work_item_id AS "workItemId", l.worker_id AS "workerId", l.epoch,
    l.acquired_at AS "acquiredAt", l.expires_at AS "expiresAt", l.renewed_at AS "renewedAt",
    l.ended_at AS "endedAt", l.outcome FROM l) x),
                             'workItem', (SELECT row_to_json(x) FROM (SELECT w.id, w.title, w.description, w.parent_id AS "parentId", w.status,
    CASE
    WHEN w.status <> 'open' THEN w.status
    WHEN w.blocking_attention_count > 0 THEN 'needs_attention'
    WHEN w.lease_expires_at > work_graph_now() THEN 'leased'
    WHEN w.open_child_count > 0 THEN 'waiting_on_children'
    WHEN w.open_dependency_count > 0 OR w.ancestor_dependency_count > 0 THEN 'blocked'
    WHEN w.not_before > work_graph_now() THEN 'scheduled'
    ELSE 'ready' END AS stage, w.priority,
    ARRAY(SELECT d.depends_on_id FROM dependencies d WHERE d.work_item_id = w.id ORDER BY d.depends_on_id) AS "dependsOn",
    w.open_child_count AS "openChildCount", w.previous_worker_id AS "previousWorkerId",
    w.project_id AS "projectId", w.requires, w.concurrency_key AS "concurrencyKey", w.not_before AS "notBefore",
    w.external_id AS "externalId",
    w.created_at AS "createdAt", w.updated_at AS "updatedAt",
    (SELECT json_build_object('id', l.id, 'workItemId', l.work_item_id, 'workerId', l.worker_id, 'epoch', l.epoch,
        'acquiredAt', l.acquired_at, 'expiresAt', l.expires_at, 'renewedAt', l.renewed_at, 'endedAt', l.ended_at, 'outcome', l.outcome)
       FROM leases l WHERE l.id = w.current_lease_id AND w.lease_expires_at > work_graph_now()) AS lease FROM w) x),
                             'announced', (EXISTS (SELECT 1 FROM unblocked) OR EXISTS (SELECT 1 FROM parent_updated WHERE open_child_count = 0)) OR l.concurrency_key IS NOT NULL),
           EXISTS (SELECT 1 FROM unblocked)
      INTO "released", "unblocked_any"
      FROM l;
    IF "unblocked_any" THEN

    -- One decrement per path: an item under two dependents of this blocker inherited it twice.
    WITH RECURSIVE below(id) AS (
      SELECT c.id FROM dependencies d JOIN work_items c ON c.parent_id = d.work_item_id WHERE d.depends_on_id = ("released"->'lease'->>'workItemId')
      UNION ALL
      SELECT c.id FROM below b JOIN work_items c ON c.parent_id = b.id
    ), paths AS (SELECT id, count(*)::int AS n FROM below GROUP BY id)
    UPDATE work_items w SET ancestor_dependency_count = w.ancestor_dependency_count - paths.n
      FROM paths WHERE w.id = paths.id;
    END IF;
    PERFORM set_config('work_graph.quiet_events', 'off', true);
    IF ("released"->>'announced')::boolean THEN
        PERFORM pg_notify('work_graph_events', 'lease.ended'), pg_notify('work_graph_events', 'work_item.status_changed');
    END IF;
    RETURN "released";
END $$;
