import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import type { Tx } from "../database/transaction";

/* People who sign in with the identity provider (server/auth/people.ts), and OpenID Connect sign-ins under way (server/auth/oidc.ts). */

export interface PersonRow {
  id: string;
  issuer: string;
  subject: string;
  email: string | null;
  name: string | null;
  role: "operator" | "admin";
  createdAt: Date;
  lastSeenAt: Date;
  disabledAt: Date | null;
}

const PERSON_COLUMNS = Prisma.sql`id::text, issuer, subject, email, name, role, created_at AS "createdAt", last_seen_at AS "lastSeenAt",
    disabled_at AS "disabledAt"`;

/** Records a sign-in: the person (new, or their email, name and role as the provider says now), seen now. */
export async function upsertSignedInPerson(
  db: Db | Tx,
  person: { issuer: string; subject: string; email: string | null; name: string | null; role: "operator" | "admin" },
): Promise<PersonRow> {
  const actor = `person:${person.email ?? person.subject}`;
  const [row] = await db.$queryRaw<PersonRow[]>`
    INSERT INTO people (issuer, subject, email, name, actor, role)
    VALUES (${person.issuer}, ${person.subject}, ${person.email}, ${person.name}, ${actor}, ${person.role})
    ON CONFLICT (issuer, subject) DO UPDATE
      SET email = EXCLUDED.email, name = EXCLUDED.name, actor = EXCLUDED.actor, role = EXCLUDED.role, last_seen_at = work_graph_clock()
    RETURNING ${PERSON_COLUMNS}`;
  return row!;
}

/** Everybody who ever signed in, most recently seen first, at most `limit`. */
export async function selectPeople(db: Db | Tx, limit: number): Promise<PersonRow[]> {
  return db.$queryRaw<PersonRow[]>`SELECT ${PERSON_COLUMNS} FROM people ORDER BY last_seen_at DESC, id LIMIT ${limit}`;
}

/**
 * Disables the person (once: a second call keeps the first time), ends their sessions and
 * revokes their personal tokens; undefined when there is no such person.
 */
export async function disablePersonEndingAccess(db: Db | Tx, id: string): Promise<PersonRow | undefined> {
  const [row] = await db.$queryRaw<PersonRow[]>`
    WITH disabled AS (
      UPDATE people SET disabled_at = COALESCE(disabled_at, work_graph_now()) WHERE id::text = ${id} RETURNING *
    ), ended AS (DELETE FROM dashboard_sessions WHERE person_id IN (SELECT id FROM disabled)
    ), revoked AS (
      UPDATE api_tokens SET revoked_at = work_graph_now() WHERE person_id IN (SELECT id FROM disabled) AND revoked_at IS NULL
    )
    SELECT ${PERSON_COLUMNS} FROM disabled`;
  return row;
}

/**
 * A known person the provider now puts in no group: their sessions end and their personal
 * tokens are revoked (they stay enabled: back in a group, they sign in again). How many tokens were revoked.
 */
export async function endAccessOfUngrouped(db: Db | Tx, issuer: string, subject: string): Promise<number> {
  const [row] = await db.$queryRaw<{ revoked: number }[]>`
    WITH person AS (SELECT id FROM people WHERE issuer = ${issuer} AND subject = ${subject}
    ), ended AS (DELETE FROM dashboard_sessions WHERE person_id IN (SELECT id FROM person)
    ), revoked AS (
      UPDATE api_tokens SET revoked_at = work_graph_now() WHERE person_id IN (SELECT id FROM person) AND revoked_at IS NULL RETURNING id
    )
    SELECT count(*)::int AS revoked FROM revoked`;
  return row?.revoked ?? 0;
}

/** Lets the person sign in again (their revoked tokens stay revoked); undefined when there is no such person. */
export async function enablePerson(db: Db | Tx, id: string): Promise<PersonRow | undefined> {
  const [row] = await db.$queryRaw<PersonRow[]>`
    UPDATE people SET disabled_at = NULL WHERE id::text = ${id} RETURNING ${PERSON_COLUMNS}`;
  return row;
}

/** A sign-in under way, usable once until `seconds` from now; expired ones are deleted on the way. */
export async function insertOidcLogin(db: Db, login: { stateHash: string; codeVerifier: string; nonce: string }, seconds: number): Promise<void> {
  await db.$executeRaw`
    WITH expired AS (DELETE FROM oidc_logins WHERE expires_at <= work_graph_now())
    INSERT INTO oidc_logins (state_hash, code_verifier, nonce, expires_at)
    VALUES (${login.stateHash}, ${login.codeVerifier}, ${login.nonce}, work_graph_now() + make_interval(secs => ${seconds}))`;
}

/** Consumes the sign-in of this state: it is deleted, so a replayed callback finds nothing. Undefined when unknown or expired. */
export async function takeOidcLogin(db: Db, stateHash: string): Promise<{ codeVerifier: string; nonce: string } | undefined> {
  const [row] = await db.$queryRaw<{ codeVerifier: string; nonce: string; live: boolean }[]>`
    DELETE FROM oidc_logins WHERE state_hash = ${stateHash}
    RETURNING code_verifier AS "codeVerifier", nonce, expires_at > work_graph_now() AS live`;
  return row?.live ? { codeVerifier: row.codeVerifier, nonce: row.nonce } : undefined;
}

/** Whom a refused person can ask: up to `limit` enabled admins, most recently seen first. */
export async function selectAdminContacts(db: Db | Tx, limit: number): Promise<{ name: string | null; email: string | null }[]> {
  return db.$queryRaw<{ name: string | null; email: string | null }[]>`
    SELECT name, email FROM people WHERE role = 'admin' AND disabled_at IS NULL AND (name IS NOT NULL OR email IS NOT NULL)
     ORDER BY last_seen_at DESC LIMIT ${limit}`;
}

/** The enabled person with this email (any issuer; the most recently seen), as an integration attributes an outside identity with that email to them. */
export async function selectEnabledPersonByEmail(db: Db | Tx, email: string): Promise<{ id: string; actor: string; name: string } | undefined> {
  const [row] = await db.$queryRaw<{ id: string; actor: string; name: string }[]>`
    SELECT id::text, actor, COALESCE(name, email, subject) AS name FROM people
    WHERE lower(email) = lower(${email}) AND disabled_at IS NULL
    ORDER BY last_seen_at DESC LIMIT 1`;
  return row;
}
