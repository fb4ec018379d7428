-- Operator control (API.md v2): revoked leases, drained workers, worker activity, token use,
-- and the reads that rule 11 (repeated expiry goes to a person) needs.

-- A lease may now end `revoked` (leases.revoke). The other invariants are unchanged and cover it:
-- leases_outcome_iff_ended (outcome set iff ended) and guard_lease_update (live → ended, once).
ALTER TABLE "leases" DROP CONSTRAINT "leases_outcome_check";
ALTER TABLE "leases" ADD CONSTRAINT "leases_outcome_check"
    CHECK ("outcome" IN ('released', 'cancelled', 'decomposed', 'attention_requested', 'expired', 'revoked'));

-- A worker's last-hour counts (workers.list): claims by acquired_at, ends by ended_at; the
-- second also finds its live leases (ended_at IS NULL).
CREATE INDEX "leases_worker_id_acquired_at_idx" ON "leases"("worker_id", "acquired_at");
CREATE INDEX "leases_worker_id_ended_at_idx" ON "leases"("worker_id", "ended_at");

-- A worker's last activity: its latest event (claim, renewal, note, finish, attention request
-- all log one with the worker as actor). One index probe per worker.
CREATE INDEX "events_actor_sequence_idx" ON "events"("actor", "sequence");

-- Drained workers claim nothing new (workers.drain). A row stays after undrain (drained_at
-- NULL) and records who changed it last.
CREATE TABLE "worker_drains" (
    "worker_id"     TEXT NOT NULL,
    "drained_at"    TIMESTAMPTZ(6),
    "reason"        TEXT,
    "changed_by"    TEXT NOT NULL,
    "changed_at"    TIMESTAMPTZ(6) NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT "worker_drains_pkey" PRIMARY KEY ("worker_id"),
    CONSTRAINT "worker_drains_reason_only_when_drained" CHECK ("drained_at" IS NOT NULL OR "reason" IS NULL)
);

-- Claims and drains of one worker serialize on a transaction-scoped advisory lock keyed by the
-- worker id (a row lock would not do: the worker may have no worker_drains row yet). A claim
-- holds it shared from before it reads the drain state until it commits; a drain takes it
-- exclusively. So a claim either commits before the drain commits or reads the drain and is
-- refused. 7825165 is the lock space of worker drains (first key of the two-key form).
CREATE FUNCTION "lock_worker_for_drain"("worker" TEXT) RETURNS void LANGUAGE sql VOLATILE AS $$
    SELECT pg_advisory_xact_lock(7825165, hashtext("worker"));
$$;

-- The claim side, in one round trip: the read after the lock is a separate statement of a
-- VOLATILE function, so under READ COMMITTED it sees every drain committed before the lock was granted.
CREATE FUNCTION "claimable_worker_drain"("worker" TEXT) RETURNS TABLE ("reason" TEXT, "drained_at" TIMESTAMPTZ) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7825165, hashtext("worker"));
    RETURN QUERY SELECT d."reason", d."drained_at" FROM "worker_drains" d WHERE d."worker_id" = "worker" AND d."drained_at" IS NOT NULL;
END $$;

-- tokens.list lastUsedAt, written at most once a minute per token (server/auth/tokens.ts).
ALTER TABLE "api_tokens" ADD COLUMN "last_used_at" TIMESTAMPTZ(6);
