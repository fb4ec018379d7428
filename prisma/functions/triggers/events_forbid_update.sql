CREATE OR REPLACE TRIGGER "events_forbid_update" BEFORE UPDATE ON "events" FOR EACH ROW EXECUTE FUNCTION "forbid_history_change"();
