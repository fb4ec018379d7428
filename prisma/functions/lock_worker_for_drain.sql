-- Claims and drains of one worker serialize on a transaction-scoped advisory lock keyed by the
-- worker id (a row lock would not do: the worker may have no worker_drains row yet). A claim
-- holds it shared from before it reads the drain state until it commits; a drain takes it
-- exclusively. So a claim either commits before the drain commits or reads the drain and is
-- refused. 7825165 is the lock space of worker drains (first key of the two-key form).
CREATE OR REPLACE FUNCTION "lock_worker_for_drain"("worker" TEXT) RETURNS void LANGUAGE sql VOLATILE AS $$
    SELECT pg_advisory_xact_lock(7825165, hashtext("worker"));
$$;
