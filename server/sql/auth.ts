import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import type { Role } from "../domain/types";

/* API tokens and dashboard sessions (server/auth/). Tokens and session ids are stored as hashes only. */

export interface TokenIdentity {
  id: string;
  role: Role;
  workerId: string | null;
  label: string | null;
  projects: string[];
  capabilities: string[];
}

export interface TokenRow extends TokenIdentity {
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/**
 * The live (not revoked) token with this hash, its last use recorded at most once a minute:
 * the conditional UPDATE writes nothing while the stored time is recent.
 */
export async function findLiveTokenNotingUse(db: Db | Tx, tokenHash: string): Promise<TokenIdentity | undefined> {
  const [row] = await db.$queryRaw<TokenIdentity[]>`
    WITH t AS (
      SELECT id, role, worker_id, label, projects, capabilities, last_used_at FROM api_tokens WHERE token_hash = ${tokenHash} AND revoked_at IS NULL
    ), used AS (
      UPDATE api_tokens a SET last_used_at = statement_timestamp() FROM t
       WHERE a.id = t.id AND (t.last_used_at IS NULL OR t.last_used_at < statement_timestamp() - interval '1 minute')
    )
    SELECT id::text, role, worker_id AS "workerId", label, projects, capabilities FROM t`;
  return row;
}

export async function insertToken(
  db: Db | Tx,
  token: { tokenHash: string; role: Role; workerId: string | null; label: string | null; projects: string[]; capabilities: string[] },
): Promise<string> {
  const [row] = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO api_tokens (token_hash, role, worker_id, label, projects, capabilities)
    VALUES (${token.tokenHash}, ${token.role}, ${token.workerId}, ${token.label}, ${token.projects}::text[], ${token.capabilities}::text[])
    RETURNING id::text`;
  return row!.id;
}

/** Every token, revoked ones included, oldest first. */
export async function selectTokens(db: Db | Tx): Promise<TokenRow[]> {
  return db.$queryRaw<TokenRow[]>`
    SELECT id::text, role, worker_id AS "workerId", label, projects, capabilities, created_at AS "createdAt", revoked_at AS "revokedAt",
           last_used_at AS "lastUsedAt"
      FROM api_tokens ORDER BY created_at, id`;
}

/** Revokes the token (once: a second revocation keeps the first time) and ends its dashboard sessions; undefined when there is no such token. */
export async function revokeTokenEndingSessions(db: Db | Tx, id: string): Promise<{ id: string; revokedAt: Date } | undefined> {
  const [row] = await db.$queryRaw<{ id: string; revokedAt: Date }[]>`
    WITH revoked AS (
      UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, statement_timestamp())
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

/** A new session, expiring `seconds` from now (database clock); expired sessions are deleted on the way. */
export async function insertSession(db: Db, idHash: string, tokenId: string, seconds: number): Promise<void> {
  await db.$executeRaw`
    WITH expired AS (DELETE FROM dashboard_sessions WHERE expires_at <= statement_timestamp())
    INSERT INTO dashboard_sessions (id_hash, token_id, created_at, expires_at)
    VALUES (${idHash}, ${tokenId}::uuid, statement_timestamp(), statement_timestamp() + make_interval(secs => ${seconds}))`;
}

/** The token of a live session: not expired (database clock) and the token not revoked. */
export async function findSessionToken(db: Db, idHash: string): Promise<TokenIdentity | undefined> {
  const [row] = await db.$queryRaw<TokenIdentity[]>`
    SELECT t.id::text, t.role, t.worker_id AS "workerId", t.label, t.projects, t.capabilities
      FROM dashboard_sessions s JOIN api_tokens t ON t.id = s.token_id
     WHERE s.id_hash = ${idHash} AND s.expires_at > statement_timestamp() AND t.revoked_at IS NULL`;
  return row;
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.$executeRaw`DELETE FROM dashboard_sessions WHERE id_hash = ${idHash}`;
}
