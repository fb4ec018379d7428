-- Work Graph: the whole data model of API.md v1.
-- Invariants that protect history live here, in the database, not only in code.

CREATE TABLE "work_items" (
    "id"                         TEXT        NOT NULL,
    "title"                      TEXT        NOT NULL,
    "description"                TEXT,
    "parent_id"                  TEXT,
    "status"                     TEXT        NOT NULL DEFAULT 'open',
    "priority"                   INTEGER     NOT NULL DEFAULT 0,
    -- Readiness counters, maintained in the same transaction as their cause (server/domain/readiness.ts).
    "open_dependency_count"      INTEGER     NOT NULL DEFAULT 0,
    "ancestor_dependency_count"  INTEGER     NOT NULL DEFAULT 0,
    "open_child_count"           INTEGER     NOT NULL DEFAULT 0,
    "blocking_attention_count"   INTEGER     NOT NULL DEFAULT 0,
    -- The unended lease, if any (live or expired-but-not-yet-ended), and the highest epoch ever issued.
    "current_lease_id"           UUID,
    "lease_expires_at"           TIMESTAMPTZ(6),
    "last_epoch"                 INTEGER     NOT NULL DEFAULT 0,
    "previous_worker_id"         TEXT,
    -- Continuity (API.md rule 9): when the last blocking attention request was resolved, and for whom.
    "continuity_worker_id"       TEXT,
    "continuity_since"           TIMESTAMPTZ(6),
    "created_at"                 TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    "updated_at"                 TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "work_items_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "work_items_id_format" CHECK ("id" ~ '^[a-z0-9][a-z0-9._-]{0,99}$'),
    CONSTRAINT "work_items_status_check" CHECK ("status" IN ('open', 'released', 'cancelled')),
    CONSTRAINT "work_items_not_own_parent" CHECK ("parent_id" IS NULL OR "parent_id" <> "id"),
    CONSTRAINT "work_items_counters_non_negative" CHECK (
        "open_dependency_count" >= 0 AND "ancestor_dependency_count" >= 0
        AND "open_child_count" >= 0 AND "blocking_attention_count" >= 0),
    CONSTRAINT "work_items_lease_pair" CHECK (("current_lease_id" IS NULL) = ("lease_expires_at" IS NULL))
);
ALTER TABLE "work_items" ADD CONSTRAINT "work_items_parent_id_fkey"
    FOREIGN KEY ("parent_id") REFERENCES "work_items"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;
CREATE INDEX "work_items_parent_id_idx" ON "work_items"("parent_id");
CREATE INDEX "work_items_status_idx" ON "work_items"("status");
-- The claim index: every open item with nothing structural in its way, in claim order.
-- Leased items stay in it (at most one per active worker) so an expired lease is claimable at once.
CREATE INDEX "work_items_claim_order_idx" ON "work_items"("priority" DESC, "created_at", "id")
    WHERE "status" = 'open' AND "open_dependency_count" = 0 AND "ancestor_dependency_count" = 0
      AND "open_child_count" = 0 AND "blocking_attention_count" = 0;
CREATE INDEX "work_items_lease_expires_at_idx" ON "work_items"("lease_expires_at") WHERE "lease_expires_at" IS NOT NULL;
-- Continuity probe (rule 9): the previous worker's held items, already in claim order.
CREATE INDEX "work_items_continuity_idx" ON "work_items"("continuity_worker_id", "priority" DESC, "created_at", "id")
    WHERE "continuity_worker_id" IS NOT NULL;

CREATE TABLE "dependencies" (
    "work_item_id"   TEXT NOT NULL,
    "depends_on_id"  TEXT NOT NULL,
    "created_at"     TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "dependencies_pkey" PRIMARY KEY ("work_item_id", "depends_on_id"),
    CONSTRAINT "dependencies_no_self_dependency" CHECK ("work_item_id" <> "depends_on_id")
);
ALTER TABLE "dependencies" ADD CONSTRAINT "dependencies_work_item_id_fkey"
    FOREIGN KEY ("work_item_id") REFERENCES "work_items"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;
ALTER TABLE "dependencies" ADD CONSTRAINT "dependencies_depends_on_id_fkey"
    FOREIGN KEY ("depends_on_id") REFERENCES "work_items"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;
CREATE INDEX "dependencies_depends_on_id_idx" ON "dependencies"("depends_on_id");

CREATE TABLE "leases" (
    "id"            UUID    NOT NULL DEFAULT gen_random_uuid(),
    "work_item_id"  TEXT    NOT NULL,
    "worker_id"     TEXT    NOT NULL,
    "epoch"         INTEGER NOT NULL,
    "acquired_at"   TIMESTAMPTZ(6) NOT NULL,
    "expires_at"    TIMESTAMPTZ(6) NOT NULL,
    "renewed_at"    TIMESTAMPTZ(6),
    "ended_at"      TIMESTAMPTZ(6),
    "outcome"       TEXT,
    CONSTRAINT "leases_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "leases_epoch_positive" CHECK ("epoch" >= 1),
    CONSTRAINT "leases_outcome_check" CHECK ("outcome" IN ('released', 'cancelled', 'decomposed', 'attention_requested', 'expired')),
    CONSTRAINT "leases_outcome_iff_ended" CHECK (("outcome" IS NULL) = ("ended_at" IS NULL))
);
ALTER TABLE "leases" ADD CONSTRAINT "leases_work_item_id_fkey"
    FOREIGN KEY ("work_item_id") REFERENCES "work_items"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;
CREATE UNIQUE INDEX "leases_work_item_id_epoch_key" ON "leases"("work_item_id", "epoch");
CREATE UNIQUE INDEX "leases_id_work_item_id_key" ON "leases"("id", "work_item_id");
CREATE UNIQUE INDEX "leases_one_unended_per_item" ON "leases"("work_item_id") WHERE "ended_at" IS NULL;
CREATE INDEX "leases_unended_expires_at_idx" ON "leases"("expires_at") WHERE "ended_at" IS NULL;
CREATE INDEX "leases_worker_id_idx" ON "leases"("worker_id");
CREATE INDEX "leases_ended_at_idx" ON "leases"("ended_at");
ALTER TABLE "work_items" ADD CONSTRAINT "work_items_current_lease_id_fkey"
    FOREIGN KEY ("current_lease_id") REFERENCES "leases"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

CREATE TABLE "attention_requests" (
    "id"            UUID    NOT NULL DEFAULT gen_random_uuid(),
    "work_item_id"  TEXT    NOT NULL,
    "lease_id"      UUID    NOT NULL,
    "worker_id"     TEXT    NOT NULL,
    "kind"          TEXT    NOT NULL,
    "question"      TEXT    NOT NULL,
    "context"       TEXT,
    "options"       TEXT[]  NOT NULL DEFAULT ARRAY[]::TEXT[],
    "blocking"      BOOLEAN NOT NULL DEFAULT true,
    "status"        TEXT    NOT NULL DEFAULT 'open',
    "resolution"    TEXT,
    "resolved_by"   TEXT,
    "created_at"    TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    "resolved_at"   TIMESTAMPTZ(6),
    CONSTRAINT "attention_requests_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "attention_requests_kind_check" CHECK ("kind" IN ('decision', 'authority', 'access', 'review', 'help', 'scope')),
    CONSTRAINT "attention_requests_status_check" CHECK ("status" IN ('open', 'resolved')),
    CONSTRAINT "attention_requests_resolved_iff" CHECK (
        ("status" = 'resolved') = ("resolved_at" IS NOT NULL)
        AND ("status" = 'resolved') = ("resolution" IS NOT NULL))
);
ALTER TABLE "attention_requests" ADD CONSTRAINT "attention_requests_lease_same_item_fkey"
    FOREIGN KEY ("lease_id", "work_item_id") REFERENCES "leases"("id", "work_item_id") ON DELETE RESTRICT ON UPDATE RESTRICT;
CREATE INDEX "attention_requests_status_created_at_idx" ON "attention_requests"("status", "created_at");
CREATE INDEX "attention_requests_work_item_id_idx" ON "attention_requests"("work_item_id");

CREATE TABLE "notes" (
    "id"            UUID    NOT NULL DEFAULT gen_random_uuid(),
    "work_item_id"  TEXT    NOT NULL,
    "lease_id"      UUID    NOT NULL,
    "epoch"         INTEGER NOT NULL,
    "worker_id"     TEXT    NOT NULL,
    "content"       TEXT    NOT NULL,
    "created_at"    TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "notes_pkey" PRIMARY KEY ("id")
);
ALTER TABLE "notes" ADD CONSTRAINT "notes_lease_same_item_fkey"
    FOREIGN KEY ("lease_id", "work_item_id") REFERENCES "leases"("id", "work_item_id") ON DELETE RESTRICT ON UPDATE RESTRICT;
CREATE INDEX "notes_work_item_id_created_at_idx" ON "notes"("work_item_id", "created_at");

-- Events: "sequence" is set by a trigger only after the writing transaction has an xid, so a
-- reader can wait for every transaction that might still commit a lower sequence (events.list).
CREATE SEQUENCE "events_sequence_seq" AS BIGINT;
CREATE TABLE "events" (
    "sequence"      BIGINT  NOT NULL,
    "work_item_id"  TEXT    NOT NULL,
    "type"          TEXT    NOT NULL,
    "actor"         TEXT    NOT NULL,
    "lease_id"      UUID,
    "epoch"         INTEGER,
    "data"          JSONB   NOT NULL DEFAULT '{}',
    "created_at"    TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "events_pkey" PRIMARY KEY ("sequence")
);
CREATE INDEX "events_work_item_id_sequence_idx" ON "events"("work_item_id", "sequence");

CREATE TABLE "api_tokens" (
    "id"            UUID    NOT NULL DEFAULT gen_random_uuid(),
    "token_hash"    TEXT    NOT NULL,
    "role"          TEXT    NOT NULL,
    "worker_id"     TEXT,
    "label"         TEXT,
    "created_at"    TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    "revoked_at"    TIMESTAMPTZ(6),
    CONSTRAINT "api_tokens_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "api_tokens_role_check" CHECK ("role" IN ('agent', 'operator', 'admin')),
    CONSTRAINT "api_tokens_agent_has_worker" CHECK (("role" = 'agent') = ("worker_id" IS NOT NULL))
);
CREATE UNIQUE INDEX "api_tokens_token_hash_key" ON "api_tokens"("token_hash");

CREATE TABLE "idempotency_receipts" (
    "scope"         TEXT    NOT NULL,
    "key"           TEXT    NOT NULL,
    "operation"     TEXT    NOT NULL,
    "request_hash"  TEXT    NOT NULL,
    "response"      JSONB,
    "created_at"    TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "idempotency_receipts_pkey" PRIMARY KEY ("scope", "key")
);

-- History is immutable (API.md rule 4).
CREATE FUNCTION "forbid_history_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'work graph history is immutable: % on % is not allowed', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END $$;

CREATE FUNCTION "guard_lease_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD."ended_at" IS NOT NULL THEN
        RAISE EXCEPTION 'lease % has ended and is immutable', OLD."id" USING ERRCODE = 'restrict_violation';
    END IF;
    IF NEW."id" IS DISTINCT FROM OLD."id" OR NEW."work_item_id" IS DISTINCT FROM OLD."work_item_id"
       OR NEW."worker_id" IS DISTINCT FROM OLD."worker_id" OR NEW."epoch" IS DISTINCT FROM OLD."epoch"
       OR NEW."acquired_at" IS DISTINCT FROM OLD."acquired_at" THEN
        RAISE EXCEPTION 'lease % identity is immutable', OLD."id" USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION "guard_attention_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD."status" = 'resolved' THEN
        RAISE EXCEPTION 'attention request % is resolved and immutable', OLD."id" USING ERRCODE = 'restrict_violation';
    END IF;
    IF NEW."id" IS DISTINCT FROM OLD."id" OR NEW."work_item_id" IS DISTINCT FROM OLD."work_item_id"
       OR NEW."lease_id" IS DISTINCT FROM OLD."lease_id" OR NEW."worker_id" IS DISTINCT FROM OLD."worker_id"
       OR NEW."kind" IS DISTINCT FROM OLD."kind" OR NEW."question" IS DISTINCT FROM OLD."question"
       OR NEW."context" IS DISTINCT FROM OLD."context" OR NEW."options" IS DISTINCT FROM OLD."options"
       OR NEW."blocking" IS DISTINCT FROM OLD."blocking" OR NEW."created_at" IS DISTINCT FROM OLD."created_at" THEN
        RAISE EXCEPTION 'attention request % may only be resolved', OLD."id" USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION "assign_event_sequence"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_current_xact_id();  -- take an xid before the sequence number (see events.list)
    NEW."sequence" := nextval('events_sequence_seq');
    RETURN NEW;
END $$;

CREATE TRIGGER "leases_guard_update" BEFORE UPDATE ON "leases" FOR EACH ROW EXECUTE FUNCTION "guard_lease_update"();
CREATE TRIGGER "leases_forbid_delete" BEFORE DELETE ON "leases" FOR EACH ROW EXECUTE FUNCTION "forbid_history_change"();
CREATE TRIGGER "attention_requests_guard_update" BEFORE UPDATE ON "attention_requests" FOR EACH ROW EXECUTE FUNCTION "guard_attention_update"();
CREATE TRIGGER "attention_requests_forbid_delete" BEFORE DELETE ON "attention_requests" FOR EACH ROW EXECUTE FUNCTION "forbid_history_change"();
CREATE TRIGGER "notes_forbid_update" BEFORE UPDATE ON "notes" FOR EACH ROW EXECUTE FUNCTION "forbid_history_change"();
CREATE TRIGGER "notes_forbid_delete" BEFORE DELETE ON "notes" FOR EACH ROW EXECUTE FUNCTION "forbid_history_change"();
CREATE TRIGGER "events_assign_sequence" BEFORE INSERT ON "events" FOR EACH ROW EXECUTE FUNCTION "assign_event_sequence"();
CREATE TRIGGER "events_forbid_update" BEFORE UPDATE ON "events" FOR EACH ROW EXECUTE FUNCTION "forbid_history_change"();
CREATE TRIGGER "events_forbid_delete" BEFORE DELETE ON "events" FOR EACH ROW EXECUTE FUNCTION "forbid_history_change"();
CREATE TRIGGER "leases_forbid_truncate" BEFORE TRUNCATE ON "leases" EXECUTE FUNCTION "forbid_history_change"();
CREATE TRIGGER "events_forbid_truncate" BEFORE TRUNCATE ON "events" EXECUTE FUNCTION "forbid_history_change"();
CREATE TRIGGER "notes_forbid_truncate" BEFORE TRUNCATE ON "notes" EXECUTE FUNCTION "forbid_history_change"();
CREATE TRIGGER "attention_requests_forbid_truncate" BEFORE TRUNCATE ON "attention_requests" EXECUTE FUNCTION "forbid_history_change"();
