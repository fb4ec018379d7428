-- The database's "now" at the start of the statement (docs/api.md: every time decision uses
-- the database clock). A plain SQL body, so PostgreSQL inlines it: plans are those of
-- statement_timestamp(). Test databases replace it with a movable version (tests/support/clock.ts).
CREATE OR REPLACE FUNCTION "work_graph_now"() RETURNS TIMESTAMPTZ LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT statement_timestamp()
$$;
