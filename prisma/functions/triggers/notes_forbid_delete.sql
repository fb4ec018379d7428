CREATE OR REPLACE TRIGGER "notes_forbid_delete" BEFORE DELETE ON "notes" FOR EACH ROW EXECUTE FUNCTION "forbid_history_change"();
