CREATE OR REPLACE TRIGGER "events_forbid_delete" BEFORE DELETE ON "events" FOR EACH ROW EXECUTE FUNCTION "forbid_history_change"();
