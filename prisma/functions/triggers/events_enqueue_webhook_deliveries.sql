CREATE OR REPLACE TRIGGER "events_enqueue_webhook_deliveries" AFTER INSERT ON "events"
    REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION "enqueue_webhook_deliveries"();
