CREATE OR REPLACE TRIGGER "events_assign_sequence" BEFORE INSERT ON "events" FOR EACH ROW EXECUTE FUNCTION "assign_event_sequence"();
