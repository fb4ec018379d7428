CREATE OR REPLACE TRIGGER "notes_forbid_truncate" BEFORE TRUNCATE ON "notes" EXECUTE FUNCTION "forbid_history_change"();
