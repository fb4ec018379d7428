CREATE OR REPLACE TRIGGER "attention_requests_forbid_truncate" BEFORE TRUNCATE ON "attention_requests" EXECUTE FUNCTION "forbid_history_change"();
