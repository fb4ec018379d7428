CREATE OR REPLACE TRIGGER "leases_forbid_delete" BEFORE DELETE ON "leases" FOR EACH ROW EXECUTE FUNCTION "forbid_history_change"();
