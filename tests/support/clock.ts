import type pg from "pg";

/**
 * The test databases' movable clock. Production SQL reads time only through work_graph_now()
 * (statement time) and work_graph_clock() (clock time), plain SQL functions
 * (prisma/functions/). The test template redefines both to add the offset held in
 * work_graph_test.clock, so every statement, trigger and column default of a test database
 * reads the moved clock.
 */
export const INSTALL_TEST_CLOCK = `
CREATE SCHEMA work_graph_test;
CREATE TABLE work_graph_test.clock (
    "single" BOOLEAN PRIMARY KEY DEFAULT true CHECK ("single"),
    "offset" INTERVAL NOT NULL DEFAULT '0'
);
INSERT INTO work_graph_test.clock DEFAULT VALUES;
CREATE OR REPLACE FUNCTION public.work_graph_now() RETURNS TIMESTAMPTZ LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT statement_timestamp() + (SELECT "offset" FROM work_graph_test.clock)
$$;
CREATE OR REPLACE FUNCTION public.work_graph_clock() RETURNS TIMESTAMPTZ LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT clock_timestamp() + (SELECT "offset" FROM work_graph_test.clock)
$$;
`;

/** Moves the database's clock `seconds` forward, for every connection at once. */
export async function advanceClock(client: pg.Client, seconds: number) {
  await client.query(`UPDATE work_graph_test.clock SET "offset" = "offset" + make_interval(secs => $1)`, [seconds]);
}

/**
 * Moves the database's clock just past `iso` (a lease's expiresAt, a gate's notBefore), if it
 * is not there yet. API times are milliseconds and the database keeps microseconds, so it
 * moves a few milliseconds further, to be past the stored instant too.
 */
export async function advanceClockPast(client: pg.Client, iso: string) {
  await client.query(
    `UPDATE work_graph_test.clock
        SET "offset" = "offset" + greatest(interval '0', $1::timestamptz + interval '5 milliseconds' - work_graph_clock())`,
    [iso],
  );
}

/** The database's (moved) clock time. */
export async function databaseClock(client: pg.Client): Promise<Date> {
  return (await client.query<{ now: Date }>("SELECT work_graph_clock() AS now")).rows[0]!.now;
}
