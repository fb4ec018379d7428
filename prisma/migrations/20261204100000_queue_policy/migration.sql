-- Queue policy (API.md v3 "Queue policy", rules 12–16): projects, capabilities, concurrency
-- limits, time gates and hand-back.

-- Rule 12: every item belongs to one project; "default" always exists.
CREATE TABLE "projects" (
    "id"         TEXT NOT NULL,
    "name"       TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "projects_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "projects_id_format" CHECK ("id" ~ '^[a-z0-9][a-z0-9-]{0,49}$')
);
INSERT INTO "projects" ("id", "name") VALUES ('default', 'Default');

ALTER TABLE "work_items"
    ADD COLUMN "project_id"      TEXT NOT NULL DEFAULT 'default',
    -- Rule 13: the capabilities a worker needs (sorted, unique).
    ADD COLUMN "requires"        TEXT[] NOT NULL DEFAULT '{}',
    -- Rule 14: at most limits.max_leases live leases per key.
    ADD COLUMN "concurrency_key" TEXT,
    -- Rule 15: not claimable before this database time (stage "scheduled").
    ADD COLUMN "not_before"      TIMESTAMPTZ(6),
    ADD COLUMN "external_id"     TEXT,
    ADD CONSTRAINT "work_items_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;
CREATE UNIQUE INDEX "work_items_project_id_external_id_key" ON "work_items"("project_id", "external_id") WHERE "external_id" IS NOT NULL;
CREATE INDEX "work_items_project_id_created_at_id_idx" ON "work_items"("project_id", "created_at", "id");
-- The soonest time gate of open items (rule 15's wake-up of waiting claims): only gated items are in it.
CREATE INDEX "work_items_not_before_idx" ON "work_items"("not_before") WHERE "not_before" IS NOT NULL AND "status" = 'open';
CREATE INDEX "work_items_concurrency_key_idx" ON "work_items"("concurrency_key") WHERE "concurrency_key" IS NOT NULL;

-- A lease counts toward the concurrency key its item had when it was claimed: a later
-- workItems.update of the key applies from the next claim and never pre-empts (rule 5).
ALTER TABLE "leases" ADD COLUMN "concurrency_key" TEXT;
CREATE INDEX "leases_unended_concurrency_key_idx" ON "leases"("concurrency_key") WHERE "ended_at" IS NULL AND "concurrency_key" IS NOT NULL;

ALTER TABLE "leases" DROP CONSTRAINT "leases_outcome_check";
ALTER TABLE "leases" ADD CONSTRAINT "leases_outcome_check"
    CHECK ("outcome" IN ('released', 'cancelled', 'decomposed', 'attention_requested', 'expired', 'revoked', 'returned'));

CREATE OR REPLACE FUNCTION "guard_lease_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD."ended_at" IS NOT NULL THEN
        RAISE EXCEPTION 'lease % has ended and is immutable', OLD."id" USING ERRCODE = 'restrict_violation';
    END IF;
    IF NEW."id" IS DISTINCT FROM OLD."id" OR NEW."work_item_id" IS DISTINCT FROM OLD."work_item_id"
       OR NEW."worker_id" IS DISTINCT FROM OLD."worker_id" OR NEW."epoch" IS DISTINCT FROM OLD."epoch"
       OR NEW."acquired_at" IS DISTINCT FROM OLD."acquired_at"
       OR NEW."concurrency_key" IS DISTINCT FROM OLD."concurrency_key" THEN
        RAISE EXCEPTION 'lease % identity is immutable', OLD."id" USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;

-- Rule 14: a key's limit. A claim of an item whose key has a row here locks the row, counts the
-- key's live leases in a later statement (a fresh snapshot) and leases only below max_leases.
CREATE TABLE "limits" (
    "key"        TEXT NOT NULL,
    "max_leases" INTEGER NOT NULL,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "limits_pkey" PRIMARY KEY ("key"),
    CONSTRAINT "limits_key_format" CHECK ("key" ~ '^[a-z0-9][a-z0-9:._/-]{0,63}$'),
    CONSTRAINT "limits_max_leases_range" CHECK ("max_leases" BETWEEN 0 AND 10000)
);

-- Token scopes ('{}' = every project) and an agent token's capabilities.
ALTER TABLE "api_tokens"
    ADD COLUMN "projects"     TEXT[] NOT NULL DEFAULT '{}',
    ADD COLUMN "capabilities" TEXT[] NOT NULL DEFAULT '{}';

-- webhooks.create's projectId filter: null = every project.
ALTER TABLE "webhooks" ADD COLUMN "project_id" TEXT,
    ADD CONSTRAINT "webhooks_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

CREATE OR REPLACE FUNCTION "enqueue_webhook_deliveries"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "webhook_deliveries" ("webhook_id", "event_sequence", "event_type", "next_attempt_at")
    SELECT w."id", e."sequence", e."type", clock_timestamp()
      FROM new_events e
      JOIN "webhooks" w ON w."deleted_at" IS NULL AND "webhook_matches"(w."events", e."type")
     WHERE w."project_id" IS NULL
        OR w."project_id" = (SELECT i."project_id" FROM "work_items" i WHERE i."id" = e."work_item_id")
     ORDER BY e."sequence";
    RETURN NULL;
END $$;

-- release_lease regenerated: WorkItem gains the queue-policy fields, and the stage precedence
-- gains "scheduled" (`npx tsx scripts/generated-sql.ts`).
CREATE OR REPLACE FUNCTION "release_lease"("p_lease" UUID, "p_epoch" INTEGER, "p_worker" TEXT, "p_data" JSONB)
RETURNS JSON LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    "released" JSON;
    "unblocked_any" BOOLEAN;
BEGIN
    PERFORM lock_for_release("p_lease");

    WITH 
  item AS (SELECT id, parent_id, last_epoch FROM work_items
            WHERE id = (SELECT work_item_id FROM leases WHERE id = "p_lease"::uuid) FOR UPDATE),
    
    l AS (
      UPDATE leases l SET ended_at = clock_timestamp(), outcome = 'released'
        FROM item
       WHERE l.ended_at IS NULL AND 
  l.id = "p_lease"::uuid AND l.epoch = "p_epoch" AND l.work_item_id = item.id AND item.last_epoch = l.epoch
  AND l.ended_at IS NULL AND l.expires_at > clock_timestamp()
  AND l.worker_id = coalesce("p_worker", l.worker_id)
      RETURNING l.*
    ), w AS (
      UPDATE work_items w SET current_lease_id = NULL, lease_expires_at = NULL, previous_worker_id = l.worker_id,
             updated_at = clock_timestamp() , status = 'released'
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
  )
    SELECT json_build_object('lease', (SELECT row_to_json(x) FROM (SELECT l.id::text AS id, l.work_item_id AS "workItemId", l.worker_id AS "workerId", l.epoch,
    l.acquired_at AS "acquiredAt", l.expires_at AS "expiresAt", l.renewed_at AS "renewedAt",
    l.ended_at AS "endedAt", l.outcome FROM l) x),
                             'workItem', (SELECT row_to_json(x) FROM (SELECT w.id, w.title, w.description, w.parent_id AS "parentId", w.status,
    CASE
    WHEN w.status <> 'open' THEN w.status
    WHEN w.blocking_attention_count > 0 THEN 'needs_attention'
    WHEN w.lease_expires_at > statement_timestamp() THEN 'leased'
    WHEN w.open_child_count > 0 THEN 'waiting_on_children'
    WHEN w.open_dependency_count > 0 OR w.ancestor_dependency_count > 0 THEN 'blocked'
    WHEN w.not_before > statement_timestamp() THEN 'scheduled'
    ELSE 'ready' END AS stage, w.priority,
    ARRAY(SELECT d.depends_on_id FROM dependencies d WHERE d.work_item_id = w.id ORDER BY d.depends_on_id) AS "dependsOn",
    w.open_child_count AS "openChildCount", w.previous_worker_id AS "previousWorkerId",
    w.project_id AS "projectId", w.requires, w.concurrency_key AS "concurrencyKey", w.not_before AS "notBefore",
    w.external_id AS "externalId",
    w.created_at AS "createdAt", w.updated_at AS "updatedAt",
    (SELECT json_build_object('id', l.id, 'workItemId', l.work_item_id, 'workerId', l.worker_id, 'epoch', l.epoch,
        'acquiredAt', l.acquired_at, 'expiresAt', l.expires_at, 'renewedAt', l.renewed_at, 'endedAt', l.ended_at, 'outcome', l.outcome)
       FROM leases l WHERE l.id = w.current_lease_id AND w.lease_expires_at > statement_timestamp()) AS lease FROM w) x)),
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
    RETURN "released";
END $$;
