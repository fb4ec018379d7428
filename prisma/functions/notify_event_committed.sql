-- Waiting instead of polling (API.md v2): every committed event wakes the app instances that
-- listen on channel "work_graph_events". Every transaction that can make work claimable (or
-- resolve an attention request) writes an event, so one trigger here covers all of them,
-- including paths added later. NOTIFY is delivered only when the writing transaction commits
-- (never for a rollback), and PostgreSQL folds identical payloads within one transaction, so
-- a release that readies 1,000 dependents sends one message per event type, not 1,000.
-- The payload is the event type: listeners decide from it whether claims need a retry.
CREATE OR REPLACE FUNCTION "notify_event_committed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('work_graph_events', NEW."type");
    RETURN NULL;
END
$$;
