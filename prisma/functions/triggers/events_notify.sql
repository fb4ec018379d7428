CREATE OR REPLACE TRIGGER "events_notify" AFTER INSERT ON "events" FOR EACH ROW
    WHEN (NEW."type" NOT IN ('lease.claimed', 'lease.renewed', 'note.added')
          AND current_setting('work_graph.quiet_events', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION "notify_event_committed"();
