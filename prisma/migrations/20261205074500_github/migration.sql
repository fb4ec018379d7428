-- GitHub: issues in, progress out (API.md v3 "GitHub: issues in, progress out").

-- Each X-GitHub-Delivery handled once: a redelivery of the same id changes nothing.
CREATE TABLE "github_deliveries" (
    "delivery_id" TEXT NOT NULL,
    "event"       TEXT NOT NULL,
    "action"      TEXT,
    "received_at" TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "github_deliveries_pkey" PRIMARY KEY ("delivery_id")
);
-- The sweep deletes them once GitHub can no longer redeliver them.
CREATE INDEX "github_deliveries_received_at_idx" ON "github_deliveries"("received_at");

-- Issues closed while their item was leased (no pre-emption, rule 5): the item is cancelled
-- when that lease ends without a release (server/github/closes.ts).
CREATE TABLE "github_closes" (
    "work_item_id" TEXT NOT NULL,
    "closed_by"    TEXT NOT NULL,
    "created_at"   TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "github_closes_pkey" PRIMARY KEY ("work_item_id")
);
ALTER TABLE "github_closes" ADD CONSTRAINT "github_closes_work_item_id_fkey"
    FOREIGN KEY ("work_item_id") REFERENCES "work_items"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- Comments posted for outbox deliveries, so a retry after a later step failed (closing the
-- issue) never posts the comment twice.
CREATE TABLE "github_comments" (
    "delivery_id" UUID   NOT NULL,
    "comment_id"  BIGINT NOT NULL,
    "created_at"  TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "github_comments_pkey" PRIMARY KEY ("delivery_id")
);
ALTER TABLE "github_comments" ADD CONSTRAINT "github_comments_delivery_id_fkey"
    FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- Progress out goes through the webhook outbox as the one webhook of format 'github'.
ALTER TABLE "webhooks" DROP CONSTRAINT "webhooks_format_check",
    ADD CONSTRAINT "webhooks_format_check" CHECK ("format" IN ('json', 'slack', 'slack_app', 'github'));
CREATE UNIQUE INDEX "webhooks_one_github" ON "webhooks" ("format") WHERE "format" = 'github' AND "deleted_at" IS NULL;

-- The 'github' webhook takes only events of items that came from a GitHub issue.
CREATE OR REPLACE FUNCTION "enqueue_webhook_deliveries"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "webhook_deliveries" ("webhook_id", "event_sequence", "event_type", "next_attempt_at")
    SELECT w."id", e."sequence", e."type", clock_timestamp()
      FROM new_events e
      LEFT JOIN "work_items" i ON i."id" = e."work_item_id"
      JOIN "webhooks" w ON w."deleted_at" IS NULL AND "webhook_matches"(w."events", e."type")
     WHERE (w."project_id" IS NULL OR w."project_id" = i."project_id")
       AND (w."format" <> 'github' OR starts_with(i."external_id", 'github:'))
     ORDER BY e."sequence";
    RETURN NULL;
END $$;
