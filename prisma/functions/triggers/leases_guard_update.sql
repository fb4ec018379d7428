CREATE OR REPLACE TRIGGER "leases_guard_update" BEFORE UPDATE ON "leases" FOR EACH ROW EXECUTE FUNCTION "guard_lease_update"();
