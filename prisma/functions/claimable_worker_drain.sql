-- The claim side, in one round trip: the read after the lock is a separate statement of a
-- VOLATILE function, so under READ COMMITTED it sees every drain committed before the lock was granted.
CREATE OR REPLACE FUNCTION "claimable_worker_drain"("worker" TEXT) RETURNS TABLE ("reason" TEXT, "drained_at" TIMESTAMPTZ) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7825165, hashtext("worker"));
    RETURN QUERY SELECT d."reason", d."drained_at" FROM "worker_drains" d WHERE d."worker_id" = "worker" AND d."drained_at" IS NOT NULL;
END $$;
