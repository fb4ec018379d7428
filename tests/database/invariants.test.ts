import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database";

/*
 * Each invariant of the data model is enforced by PostgreSQL itself: every test below makes
 * the forbidden write with raw SQL, as a buggy or hostile client could, and expects it to fail.
 */

let database: TestDatabase;
let sql: pg.Client;
beforeAll(async () => {
  database = await createTestDatabase();
  sql = await database.connect();
  await sql.query(`
    INSERT INTO work_items (id, title) VALUES ('inv-a', 'A'), ('inv-b', 'B');
    INSERT INTO leases (id, work_item_id, worker_id, epoch, acquired_at, expires_at, ended_at, outcome) VALUES
      ('00000000-0000-4000-8000-00000000000a', 'inv-a', 'w1', 1, now(), now() + interval '1 minute', now(), 'released'),
      ('00000000-0000-4000-8000-00000000000b', 'inv-a', 'w1', 2, now(), now() + interval '1 minute', NULL, NULL),
      ('00000000-0000-4000-8000-00000000000c', 'inv-b', 'w2', 1, now(), now() + interval '1 minute', NULL, NULL);
    INSERT INTO notes (id, work_item_id, lease_id, epoch, worker_id, content) VALUES
      ('00000000-0000-4000-8000-0000000000d1', 'inv-a', '00000000-0000-4000-8000-00000000000b', 2, 'w1', 'a note');
    INSERT INTO attention_requests (id, work_item_id, lease_id, worker_id, kind, question) VALUES
      ('00000000-0000-4000-8000-0000000000e1', 'inv-a', '00000000-0000-4000-8000-00000000000b', 'w1', 'help', 'why?');
    INSERT INTO events (work_item_id, type, actor) VALUES ('inv-a', 'test.event', 'test');
  `);
});
afterAll(() => database.close());

async function fails(statement: string) {
  await sql.query("SAVEPOINT attempt");
  try {
    await sql.query(statement);
  } catch (error) {
    await sql.query("ROLLBACK TO SAVEPOINT attempt");
    return (error as Error).message;
  }
  await sql.query("ROLLBACK TO SAVEPOINT attempt");
  throw new Error(`expected the database to refuse: ${statement}`);
}

describe("database invariants", () => {
  beforeAll(() => sql.query("BEGIN"));
  afterAll(() => sql.query("ROLLBACK"));

  it("at most one unended lease per work item", async () => {
    expect(await fails(`INSERT INTO leases (work_item_id, worker_id, epoch, acquired_at, expires_at)
      VALUES ('inv-a', 'w9', 3, now(), now() + interval '1 minute')`)).toMatch(/leases_one_unended_per_item/);
  });

  it("(work_item_id, epoch) is unique", async () => {
    expect(await fails(`INSERT INTO leases (work_item_id, worker_id, epoch, acquired_at, expires_at, ended_at, outcome)
      VALUES ('inv-a', 'w9', 1, now(), now(), now(), 'expired')`)).toMatch(/leases_work_item_id_epoch_key/);
  });

  it("outcome is set exactly when endedAt is set", async () => {
    expect(await fails(`UPDATE leases SET outcome = 'released' WHERE id = '00000000-0000-4000-8000-00000000000c'`)).toMatch(/leases_outcome_iff_ended/);
    expect(await fails(`UPDATE leases SET ended_at = now() WHERE id = '00000000-0000-4000-8000-00000000000c'`)).toMatch(/leases_outcome_iff_ended/);
    expect(await fails(`UPDATE leases SET ended_at = now(), outcome = 'finished' WHERE id = '00000000-0000-4000-8000-00000000000c'`)).toMatch(/leases_outcome_check/);
  });

  it("an ended lease is never updated again; a lease's identity never changes", async () => {
    expect(await fails(`UPDATE leases SET outcome = 'cancelled' WHERE id = '00000000-0000-4000-8000-00000000000a'`)).toMatch(/immutable/);
    expect(await fails(`UPDATE leases SET expires_at = now() + interval '1 hour' WHERE id = '00000000-0000-4000-8000-00000000000a'`)).toMatch(/immutable/);
    expect(await fails(`UPDATE leases SET worker_id = 'thief' WHERE id = '00000000-0000-4000-8000-00000000000c'`)).toMatch(/immutable/);
    expect(await fails(`UPDATE leases SET epoch = 5 WHERE id = '00000000-0000-4000-8000-00000000000c'`)).toMatch(/immutable/);
  });

  it("a live lease ends exactly once; then it is frozen, and it can never be un-ended", async () => {
    // Allowed: renewal of a live lease, then live → ended.
    await sql.query(`UPDATE leases SET expires_at = expires_at + interval '1 minute', renewed_at = now()
      WHERE id = '00000000-0000-4000-8000-00000000000c'`);
    await sql.query(`UPDATE leases SET ended_at = now(), outcome = 'cancelled' WHERE id = '00000000-0000-4000-8000-00000000000c'`);
    expect(await fails(`UPDATE leases SET ended_at = NULL, outcome = NULL WHERE id = '00000000-0000-4000-8000-00000000000c'`)).toMatch(/immutable/);
    expect(await fails(`UPDATE leases SET outcome = 'released' WHERE id = '00000000-0000-4000-8000-00000000000c'`)).toMatch(/immutable/);
    expect(await fails(`UPDATE leases SET ended_at = ended_at + interval '1 second' WHERE id = '00000000-0000-4000-8000-00000000000c'`)).toMatch(/immutable/);
    // Even a no-op rewrite of an ended row is refused.
    expect(await fails(`UPDATE leases SET outcome = outcome WHERE id = '00000000-0000-4000-8000-00000000000c'`)).toMatch(/immutable/);
    // Identity columns of a live lease never change either.
    for (const change of [
      "id = gen_random_uuid()", "work_item_id = 'inv-b'", "acquired_at = acquired_at - interval '1 hour'",
    ]) {
      expect(await fails(`UPDATE leases SET ${change} WHERE id = '00000000-0000-4000-8000-00000000000b'`)).toMatch(/immutable/);
    }
  });

  it("leases, events, notes and attention requests are never deleted or truncated", async () => {
    expect(await fails(`DELETE FROM leases WHERE id = '00000000-0000-4000-8000-00000000000a'`)).toMatch(/immutable/);
    expect(await fails(`DELETE FROM events`)).toMatch(/immutable/);
    expect(await fails(`DELETE FROM notes`)).toMatch(/immutable/);
    expect(await fails(`DELETE FROM attention_requests`)).toMatch(/immutable/);
    for (const table of ["leases", "events", "notes", "attention_requests"]) {
      expect(await fails(`TRUNCATE ${table} CASCADE`)).toMatch(/immutable/);
    }
  });

  it("events and notes are never updated; a resolved attention request is frozen", async () => {
    expect(await fails(`UPDATE events SET actor = 'someone else'`)).toMatch(/immutable/);
    expect(await fails(`UPDATE notes SET content = 'rewritten'`)).toMatch(/immutable/);
    expect(await fails(`UPDATE attention_requests SET question = 'another question'`)).toMatch(/may only be resolved/);
    await sql.query(`UPDATE attention_requests SET status = 'resolved', resolution = 'yes', resolved_at = now()
      WHERE id = '00000000-0000-4000-8000-0000000000e1'`);
    expect(await fails(`UPDATE attention_requests SET resolution = 'no'`)).toMatch(/resolved and immutable/);
  });

  it("no self-dependency; no item is its own parent", async () => {
    expect(await fails(`INSERT INTO dependencies (work_item_id, depends_on_id) VALUES ('inv-a', 'inv-a')`)).toMatch(/dependencies_no_self_dependency/);
    expect(await fails(`UPDATE work_items SET parent_id = id WHERE id = 'inv-a'`)).toMatch(/work_items_not_own_parent/);
  });

  it("a note's or attention request's lease belongs to the same work item", async () => {
    expect(await fails(`INSERT INTO notes (work_item_id, lease_id, epoch, worker_id, content)
      VALUES ('inv-b', '00000000-0000-4000-8000-00000000000b', 2, 'w1', 'wrong item')`)).toMatch(/notes_lease_same_item_fkey/);
    expect(await fails(`INSERT INTO attention_requests (work_item_id, lease_id, worker_id, kind, question)
      VALUES ('inv-b', '00000000-0000-4000-8000-00000000000b', 'w1', 'help', 'wrong item')`)).toMatch(/attention_requests_lease_same_item_fkey/);
  });

  it("ids, statuses, kinds, counters and token roles are checked", async () => {
    for (const id of ["Not Valid", "UPPER", ".leading-dot", "-leading-dash", "", "a".repeat(101), "sp ace", "slash/y"]) {
      expect(await fails(`INSERT INTO work_items (id, title) VALUES ('${id}', 't')`)).toMatch(/work_items_id_format/);
    }
    await sql.query(`INSERT INTO work_items (id, title) VALUES ('${"a".repeat(100)}', 'longest'), ('0.a_b-c', 'punctuated')`);
    expect(await fails(`UPDATE work_items SET status = 'done' WHERE id = 'inv-b'`)).toMatch(/work_items_status_check/);
    expect(await fails(`UPDATE work_items SET open_child_count = -1 WHERE id = 'inv-b'`)).toMatch(/work_items_counters_non_negative/);
    expect(await fails(`INSERT INTO attention_requests (work_item_id, lease_id, worker_id, kind, question)
      VALUES ('inv-b', '00000000-0000-4000-8000-00000000000c', 'w2', 'gossip', 'q')`)).toMatch(/attention_requests_kind_check/);
    expect(await fails(`INSERT INTO api_tokens (token_hash, role) VALUES ('h1', 'agent')`)).toMatch(/api_tokens_agent_has_worker/);
    expect(await fails(`INSERT INTO api_tokens (token_hash, role, worker_id) VALUES ('h2', 'operator', 'w1')`)).toMatch(/api_tokens_agent_has_worker/);
    expect(await fails(`INSERT INTO api_tokens (token_hash, role, worker_id) VALUES ('h3', 'admin', 'w1')`)).toMatch(/api_tokens_agent_has_worker/);
    expect(await fails(`INSERT INTO api_tokens (token_hash, role) VALUES ('h4', 'superuser')`)).toMatch(/api_tokens_role_check/);
    await sql.query(`INSERT INTO api_tokens (token_hash, role, worker_id) VALUES ('h5', 'agent', 'w1')`);
    expect(await fails(`UPDATE api_tokens SET worker_id = NULL WHERE token_hash = 'h5'`)).toMatch(/api_tokens_agent_has_worker/);
    expect(await fails(`UPDATE api_tokens SET role = 'operator' WHERE token_hash = 'h5'`)).toMatch(/api_tokens_agent_has_worker/);
  });

  it("revoked (v2) is an outcome like the others: set iff ended, live → revoked once, then frozen", async () => {
    await sql.query(`INSERT INTO work_items (id, title) VALUES ('inv-r', 'R');
      INSERT INTO leases (id, work_item_id, worker_id, epoch, acquired_at, expires_at) VALUES
        ('00000000-0000-4000-8000-0000000000f1', 'inv-r', 'w3', 1, now(), now() + interval '1 minute')`);
    expect(await fails(`UPDATE leases SET outcome = 'revoked' WHERE id = '00000000-0000-4000-8000-0000000000f1'`)).toMatch(/leases_outcome_iff_ended/);
    expect(await fails(`UPDATE leases SET outcome = 'revoked_by_admin', ended_at = now() WHERE id = '00000000-0000-4000-8000-0000000000f1'`)).toMatch(/leases_outcome_check/);
    await sql.query(`UPDATE leases SET ended_at = now(), outcome = 'revoked' WHERE id = '00000000-0000-4000-8000-0000000000f1'`);
    for (const change of ["outcome = 'released'", "ended_at = NULL, outcome = NULL", "expires_at = now() + interval '1 hour'", "outcome = outcome"]) {
      expect(await fails(`UPDATE leases SET ${change} WHERE id = '00000000-0000-4000-8000-0000000000f1'`)).toMatch(/immutable/);
    }
    expect(await fails(`DELETE FROM leases WHERE id = '00000000-0000-4000-8000-0000000000f1'`)).toMatch(/immutable/);
    expect(await fails(`INSERT INTO leases (work_item_id, worker_id, epoch, acquired_at, expires_at, outcome)
      VALUES ('inv-r', 'w3', 2, now(), now(), 'revoked')`)).toMatch(/leases_outcome_iff_ended/);
    expect(await fails(`INSERT INTO worker_drains (worker_id, drained_at, reason, changed_by) VALUES ('w3', NULL, 'why', 'op')`))
      .toMatch(/worker_drains_reason_only_when_drained/);
  });
});
