-- Release takes its row locks before its fused statement: the item's, then its dependents' in
-- id order (the global lock order). Each in a statement of its own, so each reads the graph as
-- it is once the lock before it was granted (an edge committed while release waited for the
-- item is seen). Both in one round trip: a release is on every agent's hot path.
CREATE OR REPLACE FUNCTION "lock_for_release"("lease" UUID) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    "item" TEXT;
BEGIN
    SELECT w."id" INTO "item" FROM "work_items" w
     WHERE w."id" = (SELECT l."work_item_id" FROM "leases" l WHERE l."id" = "lease") FOR UPDATE;
    IF "item" IS NULL THEN
        RETURN;
    END IF;
    PERFORM 1 FROM "work_items" w
      WHERE w."id" IN (SELECT e."work_item_id" FROM "dependencies" e WHERE e."depends_on_id" = "item")
      ORDER BY w."id" FOR UPDATE;
END $$;
