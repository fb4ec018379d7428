-- Most releases make nothing claimable: the item had no dependents and no parent. Such a
-- release no longer notifies (a notifying commit is serialized with every other one through
-- its WAL flush; see 20261203170000), the same way claims, renewals and notes do not.
--   * lease.ended with outcome released or cancelled: never announced by itself. The same
--     transaction writes the item's work_item.status_changed, which decides.
--   * work_item.status_changed to released or cancelled: announced when the item has a
--     dependent or a parent (either may have become ready), quiet otherwise.
-- The instance that commits a quiet event announces it to its own event-stream readers
-- (announceLocally); other instances' readers see it with their next announced event or at
-- their periodic re-check.
CREATE OR REPLACE FUNCTION "notify_event_committed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."type" = 'lease.ended' AND NEW."data"->>'outcome' IN ('released', 'cancelled') THEN
        RETURN NULL;
    END IF;
    -- The parent first: every item of a cancelled subtree but its root has one.
    IF NEW."type" = 'work_item.status_changed' AND NEW."data"->>'to' IN ('released', 'cancelled')
       AND NOT EXISTS (SELECT 1 FROM "work_items" w WHERE w."id" = NEW."work_item_id" AND w."parent_id" IS NOT NULL)
       AND NOT EXISTS (SELECT 1 FROM "dependencies" d WHERE d."depends_on_id" = NEW."work_item_id") THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('work_graph_events', NEW."type");
    RETURN NULL;
END
$$;
