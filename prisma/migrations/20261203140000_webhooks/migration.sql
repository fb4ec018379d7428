-- Webhooks (API.md v2 "Webhooks"): subscriptions and a durable delivery outbox.

CREATE TABLE "webhooks" (
    "id"                UUID    NOT NULL DEFAULT gen_random_uuid(),
    "url"               TEXT    NOT NULL,
    "events"            TEXT[]  NOT NULL DEFAULT ARRAY['*']::TEXT[],
    "format"            TEXT    NOT NULL DEFAULT 'json',
    "label"             TEXT,
    -- AES-256-GCM ciphertext of the signing secret; the key lives outside the database
    -- (WORK_GRAPH_SECRET_KEY or the key file in the data directory, see server/webhooks/secret-box.ts).
    "secret_ciphertext" TEXT    NOT NULL,
    "created_at"        TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    -- Soft delete: outbox rows keep their webhook, and a deletion racing an event's
    -- transaction never makes that transaction fail on a foreign key.
    "deleted_at"        TIMESTAMPTZ(6),
    "last_delivered_at" TIMESTAMPTZ(6),
    "failing"           BOOLEAN NOT NULL DEFAULT false,
    "last_error"        TEXT,
    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhooks_format_check" CHECK ("format" IN ('json', 'slack'))
);

CREATE TABLE "webhook_deliveries" (
    "id"              UUID    NOT NULL DEFAULT gen_random_uuid(),
    "webhook_id"      UUID    NOT NULL,
    -- 0 for a test delivery (webhooks.test), which has no event.
    "event_sequence"  BIGINT  NOT NULL,
    "event_type"      TEXT    NOT NULL,
    "status"          TEXT    NOT NULL DEFAULT 'pending',
    "attempts"        INTEGER NOT NULL DEFAULT 0,
    -- While pending: when the next attempt is due. While an attempt is in flight it is that
    -- attempt's lease, so a crashed instance's delivery becomes due again.
    "next_attempt_at" TIMESTAMPTZ(6),
    "response_status" INTEGER,
    "response_body"   TEXT,
    "error"           TEXT,
    "created_at"      TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    "delivered_at"    TIMESTAMPTZ(6),
    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_deliveries_status_check" CHECK ("status" IN ('pending', 'delivered', 'failed')),
    CONSTRAINT "webhook_deliveries_due_when_pending" CHECK (("status" = 'pending') = ("next_attempt_at" IS NOT NULL))
);
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_fkey"
    FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;
CREATE INDEX "webhook_deliveries_webhook_id_created_at_idx" ON "webhook_deliveries"("webhook_id", "created_at");
-- The dispatchers' due query.
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries"("next_attempt_at") WHERE "status" = 'pending';

-- Does a webhook's `events` list (exact types, "prefix.*" or "*") take this event type?
CREATE FUNCTION "webhook_matches"(patterns TEXT[], event_type TEXT) RETURNS BOOLEAN
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT EXISTS (
        SELECT 1 FROM unnest(patterns) AS p
         WHERE p = '*' OR p = event_type
            OR (right(p, 2) = '.*' AND starts_with(event_type, left(p, -1)))
    )
$$;

-- The outbox is filled in the event's own transaction, whichever code path wrote the event:
-- a committed event always has its deliveries, a rolled-back one never does.
CREATE FUNCTION "enqueue_webhook_deliveries"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "webhook_deliveries" ("webhook_id", "event_sequence", "event_type", "next_attempt_at")
    SELECT w."id", e."sequence", e."type", clock_timestamp()
      FROM new_events e
      JOIN "webhooks" w ON w."deleted_at" IS NULL AND "webhook_matches"(w."events", e."type")
     ORDER BY e."sequence";
    RETURN NULL;
END $$;

CREATE TRIGGER "events_enqueue_webhook_deliveries" AFTER INSERT ON "events"
    REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION "enqueue_webhook_deliveries"();
