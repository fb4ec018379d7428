import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import { notFound, WorkGraphError } from "../errors";
import type { Caller, Role } from "../domain/types";

const PREFIX: Record<Role, string> = { agent: "wga", operator: "wgo", admin: "wgx" };

export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

function newSecret(role: Role): string {
  return `${PREFIX[role]}_${randomBytes(24).toString("base64url")}`;
}

interface TokenRow {
  id: string;
  role: Role;
  workerId: string | null;
  label: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

/** The caller a bearer token stands for, or null when it is unknown or revoked. */
export async function authenticate(db: Db | Tx, token: string): Promise<Caller | null> {
  const [row] = await db.$queryRaw<TokenRow[]>`
    SELECT id::text, role, worker_id AS "workerId", label FROM api_tokens
     WHERE token_hash = ${hashToken(token)} AND revoked_at IS NULL`;
  if (!row) return null;
  return {
    tokenId: row.id,
    role: row.role,
    workerId: row.workerId,
    actor: row.role === "agent" ? row.workerId! : `${row.role}:${row.label ?? row.id.slice(0, 8)}`,
  };
}

export interface CreateTokenInput {
  role: Role;
  workerId?: string;
  label?: string;
}

export async function createToken(db: Db | Tx, input: CreateTokenInput, secret?: string) {
  if (input.role === "agent" && !input.workerId) {
    throw new WorkGraphError("VALIDATION", "an agent token needs a workerId");
  }
  if (input.role !== "agent" && input.workerId) {
    throw new WorkGraphError("VALIDATION", "only agent tokens are bound to a workerId");
  }
  const token = secret ?? newSecret(input.role);
  const [row] = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO api_tokens (token_hash, role, worker_id, label)
    VALUES (${hashToken(token)}, ${input.role}, ${input.workerId ?? null}, ${input.label ?? null})
    RETURNING id::text`;
  return { id: row!.id, token };
}

export async function listTokens(db: Db | Tx) {
  const rows = await db.$queryRaw<TokenRow[]>`
    SELECT id::text, role, worker_id AS "workerId", label, created_at AS "createdAt", revoked_at AS "revokedAt"
      FROM api_tokens ORDER BY created_at, id`;
  return rows.map((row) => ({
    id: row.id,
    role: row.role,
    workerId: row.workerId,
    label: row.label,
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
  }));
}

export async function revokeToken(db: Db | Tx, id: string) {
  const [row] = await db.$queryRaw<{ id: string; revokedAt: Date }[]>`
    UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, statement_timestamp())
     WHERE id::text = ${id} RETURNING id::text, revoked_at AS "revokedAt"`;
  if (!row) throw notFound("token", id);
  return { id: row.id, revokedAt: row.revokedAt.toISOString() };
}

/**
 * First start: make sure an admin can get in. WORK_GRAPH_ADMIN_TOKEN, when set, is (also)
 * accepted as an admin token; otherwise, if no admin token exists, one is created and
 * returned so the start script can print it once.
 */
export async function ensureAdminToken(db: Db, configured?: string): Promise<string | null> {
  if (configured) {
    const known = await authenticate(db, configured);
    if (!known) await createToken(db, { role: "admin", label: "WORK_GRAPH_ADMIN_TOKEN" }, configured);
    return null;
  }
  const [existing] = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM api_tokens WHERE role = 'admin' AND revoked_at IS NULL`;
  if ((existing?.n ?? 0) > 0) return null;
  const { token } = await createToken(db, { role: "admin", label: "first-start" });
  return token;
}

/** Whether token `id` is still accepted (long-lived requests such as events.stream re-check it). */
export async function tokenIsLive(db: Db | Tx, id: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ live: boolean }[]>`SELECT revoked_at IS NULL AS live FROM api_tokens WHERE id::text = ${id}`;
  return rows[0]?.live === true;
}
