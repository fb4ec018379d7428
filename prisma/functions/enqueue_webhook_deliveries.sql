-- The 'github' webhook takes only events of items that came from a GitHub issue.
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
