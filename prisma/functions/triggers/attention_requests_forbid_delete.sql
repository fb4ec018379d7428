CREATE OR REPLACE TRIGGER "attention_requests_forbid_delete" BEFORE DELETE ON "attention_requests" FOR EACH ROW EXECUTE FUNCTION "forbid_history_change"();
