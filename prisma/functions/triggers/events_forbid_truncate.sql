CREATE OR REPLACE TRIGGER "events_forbid_truncate" BEFORE TRUNCATE ON "events" EXECUTE FUNCTION "forbid_history_change"();
