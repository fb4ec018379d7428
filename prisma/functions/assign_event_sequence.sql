CREATE OR REPLACE FUNCTION "assign_event_sequence"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_current_xact_id();  -- take an xid before the sequence number (see events.list)
    NEW."sequence" := nextval('events_sequence_seq');
    RETURN NEW;
END $$;
