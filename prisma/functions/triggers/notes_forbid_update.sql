CREATE OR REPLACE TRIGGER "notes_forbid_update" BEFORE UPDATE ON "notes" FOR EACH ROW EXECUTE FUNCTION "forbid_history_change"();
