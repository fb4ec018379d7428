import type pg from "pg";

/*
 * Rows a test needs in bulk or in a shape no API call makes, written in one statement each.
 * State that an API call makes is made through the API; time passes with the database clock
 * (tests/support/clock.ts), never by back-dating rows.
 */

/** Inserts `count` ready root items with ids `${prefix}-00001`… in one statement. */
export async function insertReadyItems(client: pg.Client, prefix: string, count: number, priority = 0) {
  await client.query(
    `INSERT INTO work_items (id, title, priority) SELECT $1 || '-' || lpad(g::text, 5, '0'), 'item ' || g, $3 FROM generate_series(1, $2) g`,
    [prefix, count, priority],
  );
}

/** Inserts `count` idempotency receipts (keys `k1`…) of `scope`, as `count` notes with keys would leave. */
export async function insertIdempotencyReceipts(client: pg.Client, scope: string, count: number) {
  await client.query(
    `INSERT INTO idempotency_receipts (scope, key, operation, request_hash) SELECT $1, 'k' || i, 'leases.note', 'h' FROM generate_series(1, $2) i`,
    [scope, count],
  );
}

/** A person as a sign-in through the identity provider `https://idp.example` records one; `disabled` as an admin leaves one. */
export async function insertPerson(client: pg.Client, person: { subject: string; email: string; name: string; role: "operator" | "admin"; disabled?: boolean }) {
  await client.query(
    `INSERT INTO people (issuer, subject, email, name, actor, role, disabled_at)
     VALUES ('https://idp.example', $1, $2, $3, 'person:' || $2, $4, CASE WHEN $5 THEN work_graph_now() END)`,
    [person.subject, person.email, person.name, person.role, person.disabled ?? false],
  );
}
