-- The wall clock during a statement (clock_timestamp()), for every time written or compared
-- where a long statement must not use its start. Inlined like work_graph_now(); test databases
-- replace it with a movable version (tests/support/clock.ts).
CREATE OR REPLACE FUNCTION "work_graph_clock"() RETURNS TIMESTAMPTZ LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT clock_timestamp()
$$;
