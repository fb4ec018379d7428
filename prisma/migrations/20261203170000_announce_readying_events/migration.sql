-- PostgreSQL serializes the commits of all transactions that NOTIFY (a cluster-wide lock held
-- through the commit's WAL flush). Claims, renewals and notes are most of an agent fleet's
-- commits and make nothing claimable, so they no longer notify: waiting claims and attention
-- waits never needed them. An app instance announces its own such commits to its event-stream
-- readers in-process (server/realtime/wakeups.ts announceLocally); readers on other instances
-- see them with the next announced event, or at their periodic re-check.
DROP TRIGGER "events_notify" ON "events";
CREATE TRIGGER "events_notify" AFTER INSERT ON "events" FOR EACH ROW
    WHEN (NEW."type" NOT IN ('lease.claimed', 'lease.renewed', 'note.added'))
    EXECUTE FUNCTION "notify_event_committed"();
