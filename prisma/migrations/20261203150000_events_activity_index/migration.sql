-- dashboard.activity aggregates events of a few types over the last hour/day/week:
-- one index range per type instead of a scan of the whole history.
CREATE INDEX "events_type_created_at_idx" ON "events"("type", "created_at");
