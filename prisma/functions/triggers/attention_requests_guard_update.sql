CREATE OR REPLACE TRIGGER "attention_requests_guard_update" BEFORE UPDATE ON "attention_requests" FOR EACH ROW EXECUTE FUNCTION "guard_attention_update"();
