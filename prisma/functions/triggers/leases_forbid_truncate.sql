CREATE OR REPLACE TRIGGER "leases_forbid_truncate" BEFORE TRUNCATE ON "leases" EXECUTE FUNCTION "forbid_history_change"();
