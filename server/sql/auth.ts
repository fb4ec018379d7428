import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import type { Role } from "@work-graph/contract";

/* API tokens and dashboard sessions (server/auth/). Tokens and session ids are stored as hashes only. */

export interface TokenIdentity {
  id: string;
  role: Role;
  workerId: string | null;
  label: string | null;
  projects: string[];
  capabilities: string[];
  /** A personal token's person (their id, actor and display name); null for other tokens. */
  personId: string | null;
  personActor: string | null;
  personName: string | null;
}

export interface TokenRow extends Omit<TokenIdentity, "personActor"> {
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** A person's display name: their name, else their email, else their subject. */
const PERSON_NAME = Prisma.sql`COALESCE(p.name, p.email, p.subject)`;

/**
 * The live (not revoked, its person not disabled) token with this hash, its last use recorded
 * at most once a minute: the conditional UPDATE writes nothing while the stored time is recent.
 */
export async function findLiveTokenNotingUse(db: Db | Tx, tokenHash: string): Promise<TokenIdentity | undefined> {
  const [row] = await db.$queryRaw<TokenIdentity[]>`
    WITH t AS (
      SELECT a.id, a.role, a.worker_id, a.label, a.projects, a.capabilities, a.last_used_at, a.person_id, p.actor AS person_actor, ${PERSON_NAME} AS person_name
        FROM api_tokens a LEFT JOIN people p ON p.id = a.person_id
       WHERE a.token_hash = ${tokenHash} AND a.revoked_at IS NULL AND p.disabled_at IS NULL
    ), used AS (
      UPDATE api_tokens a SET last_used_at = work_graph_now() FROM t
       WHERE a.id = t.id AND (t.last_used_at IS NULL OR t.last_used_at < work_graph_now() - interval '1 minute')
    )
    SELECT id::text, role, worker_id AS "workerId", label, projects, capabilities, person_id::text AS "personId",
           person_actor AS "personActor", person_name AS "personName" FROM t`;
  return row;
}

export async function insertToken(
  db: Db | Tx,
  token: { tokenHash: string; role: Role; workerId: string | null; label: string | null; projects: string[]; capabilities: string[]; personId: string | null },
): Promise<string> {
  const [row] = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO api_tokens (token_hash, role, worker_id, label, projects, capabilities, person_id)
    VALUES (${token.tokenHash}, ${token.role}, ${token.workerId}, ${token.label}, ${token.projects}::text[], ${token.capabilities}::text[],
            ${token.personId}::uuid)
    RETURNING id::text`;
  return row!.id;
}

/** Every token (or only `personId`'s personal tokens), revoked ones included, oldest first. */
export async function selectTokens(db: Db | Tx, personId?: string): Promise<TokenRow[]> {
  const only = personId === undefined ? Prisma.empty : Prisma.sql`WHERE a.person_id = ${personId}::uuid`;
  return db.$queryRaw<TokenRow[]>`
    SELECT a.id::text, a.role, a.worker_id AS "workerId", a.label, a.projects, a.capabilities, a.created_at AS "createdAt",
           a.revoked_at AS "revokedAt", a.last_used_at AS "lastUsedAt", a.person_id::text AS "personId", ${PERSON_NAME} AS "personName"
      FROM api_tokens a LEFT JOIN people p ON p.id = a.person_id ${only} ORDER BY a.created_at, a.id`;
}

/** The person a token belongs to (null: not a personal token); undefined when there is no such token. */
export async function tokenOwner(db: Db | Tx, id: string): Promise<{ personId: string | null } | undefined> {
  const [row] = await db.$queryRaw<{ personId: string | null }[]>`
    SELECT person_id::text AS "personId" FROM api_tokens WHERE id::text = ${id}`;
  return row;
}

/** Revokes the token (once: a second revocation keeps the first time) and ends its dashboard sessions; undefined when there is no such token. */
export async function revokeTokenEndingSessions(db: Db | Tx, id: string): Promise<{ id: string; revokedAt: Date } | undefined> {
  const [row] = await db.$queryRaw<{ id: string; revokedAt: Date }[]>`
    WITH revoked AS (
      UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, work_graph_now())
       WHERE id::text = ${id} RETURNING id, revoked_at
    ), ended AS (DELETE FROM dashboard_sessions WHERE token_id IN (SELECT id FROM revoked))
    SELECT id::text, revoked_at AS "revokedAt" FROM revoked`;
  return row;
}

/** Serializes instances bootstrapping the admin token on one database, until the transaction ends. */
export async function lockAdminBootstrap(tx: Tx, lockKey: number): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${lockKey})`;
}

/** Registers the configured admin secret (if new) and returns the token it is now. */
export async function upsertConfiguredAdminToken(tx: Tx, tokenHash: string, label: string): Promise<{ id: string; role: Role; revoked: boolean }> {
  await tx.$executeRaw`
    INSERT INTO api_tokens (token_hash, role, label) VALUES (${tokenHash}, 'admin', ${label})
    ON CONFLICT (token_hash) DO NOTHING`;
  const [row] = await tx.$queryRaw<{ id: string; role: Role; revoked: boolean }[]>`
    SELECT id::text, role, revoked_at IS NOT NULL AS revoked FROM api_tokens WHERE token_hash = ${tokenHash}`;
  return row!;
}

export async function countLiveAdminTokens(tx: Tx): Promise<number> {
  const [existing] = await tx.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM api_tokens WHERE role = 'admin' AND revoked_at IS NULL`;
  return existing?.n ?? 0;
}

/** A new session of a token or of a person, expiring `seconds` from now (database clock); expired sessions are deleted on the way. */
export async function insertSession(db: Db, idHash: string, owner: { tokenId: string } | { personId: string }, seconds: number): Promise<void> {
  const tokenId = "tokenId" in owner ? owner.tokenId : null;
  const personId = "personId" in owner ? owner.personId : null;
  await db.$executeRaw`
    WITH expired AS (DELETE FROM dashboard_sessions WHERE expires_at <= work_graph_now())
    INSERT INTO dashboard_sessions (id_hash, token_id, person_id, created_at, expires_at)
    VALUES (${idHash}, ${tokenId}::uuid, ${personId}::uuid, work_graph_now(), work_graph_now() + make_interval(secs => ${seconds}))`;
}

export interface SessionPerson {
  id: string;
  role: Role;
  actor: string;
  name: string;
}

/**
 * Who a live session (not expired, database clock) stands for: its token when not revoked, or
 * its person when not disabled (their last sight recorded at most once a minute).
 */
export async function findSessionOwner(db: Db, idHash: string): Promise<{ token: TokenIdentity | null; person: SessionPerson | null } | undefined> {
  const [row] = await db.$queryRaw<{ token: TokenIdentity | null; person: SessionPerson | null }[]>`
    WITH s AS (
      SELECT token_id, person_id FROM dashboard_sessions WHERE id_hash = ${idHash} AND expires_at > work_graph_now()
    ), seen AS (
      UPDATE people p SET last_seen_at = work_graph_now() FROM s
       WHERE p.id = s.person_id AND p.disabled_at IS NULL AND p.last_seen_at < work_graph_now() - interval '1 minute'
    )
    SELECT (SELECT jsonb_build_object('id', t.id::text, 'role', t.role, 'workerId', t.worker_id, 'label', t.label, 'projects', to_jsonb(t.projects),
                   'capabilities', to_jsonb(t.capabilities), 'personId', NULL, 'personActor', NULL, 'personName', NULL)
              FROM api_tokens t WHERE t.id = s.token_id AND t.revoked_at IS NULL) AS token,
           (SELECT jsonb_build_object('id', p.id::text, 'role', p.role, 'actor', p.actor, 'name', ${PERSON_NAME})
              FROM people p WHERE p.id = s.person_id AND p.disabled_at IS NULL) AS person
      FROM s`;
  return row;
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.$executeRaw`DELETE FROM dashboard_sessions WHERE id_hash = ${idHash}`;
}
