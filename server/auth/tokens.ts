import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../db";
import { inTransaction, type Tx } from "../database/transaction";
import { notFound, WorkGraphError } from "../errors";
import type { Role } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import {
  countLiveAdminTokens, findLiveTokenNotingUse, insertToken, lockAdminBootstrap, revokeTokenEndingSessions, selectTokens,
  upsertConfiguredAdminToken, type TokenIdentity,
} from "../sql/auth";
import { firstUnknownProject } from "../sql/projects";

const PREFIX: Record<Role, string> = { agent: "wga", operator: "wgo", admin: "wgx" };

export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

function newSecret(role: Role): string {
  return `${PREFIX[role]}_${randomBytes(24).toString("base64url")}`;
}

/** A personal token acts as its person (actor `person:…`); other tokens as their role and label, agents as their worker. */
export function callerFromToken(row: TokenIdentity): Caller {
  const person = row.personId !== null ? { id: row.personId, name: row.personName! } : null;
  return {
    tokenId: row.id,
    role: row.role,
    workerId: row.workerId,
    actor: row.personActor ?? (row.role === "agent" ? row.workerId! : `${row.role}:${row.label ?? row.id.slice(0, 8)}`),
    projects: row.projects,
    capabilities: row.capabilities,
    person,
  };
}

/**
 * Recently authenticated tokens, per database client: a busy agent's calls skip the lookup.
 * An entry lives AUTH_CACHE_MS; revoking a token through this process clears the cache at
 * once, and another app instance sees a revocation within AUTH_CACHE_MS. Only known tokens
 * are kept (a new token works at once) and the map is bounded, so random tokens cannot grow it.
 */
const AUTH_CACHE_MS = 1_000;
const AUTH_CACHE_MAX = 10_000;
const authCache = new WeakMap<object, Map<string, { caller: Caller; until: number; generation: number }>>();
/** Bumped by every revocation in this process: older cache entries no longer count. */
let revocations = 0;

/** Drops every cached authentication (a revocation does this; tests that edit tokens in SQL call it). */
export function forgetAuthenticatedTokens(): void {
  revocations++;
}

function cachedCallers(db: Db | Tx): Map<string, { caller: Caller; until: number; generation: number }> {
  let callers = authCache.get(db);
  if (!callers) authCache.set(db, (callers = new Map()));
  return callers;
}

/**
 * The caller a bearer token stands for, or null when it is unknown or revoked. Records when
 * the token was last used, at most once a minute per token: the conditional UPDATE writes
 * nothing while the stored time is recent, so busy tokens cost no extra writes.
 */
export async function authenticate(db: Db | Tx, token: string): Promise<Caller | null> {
  const hash = hashToken(token);
  const callers = cachedCallers(db);
  const cached = callers.get(hash);
  if (cached && cached.generation === revocations && cached.until > performance.now()) return cached.caller;
  const row = await findLiveTokenNotingUse(db, hash);
  if (!row) {
    callers.delete(hash);
    return null;
  }
  const caller = callerFromToken(row);
  if (callers.size >= AUTH_CACHE_MAX) callers.clear();
  callers.set(hash, { caller, until: performance.now() + AUTH_CACHE_MS, generation: revocations });
  return caller;
}

export interface CreateTokenInput {
  role: Role;
  workerId?: string;
  label?: string;
  /** Rule 12 (projects scope tokens): the projects the token may see; none = every project. */
  projects?: string[];
  /** Rule 13: what an agent token's claims may take. */
  capabilities?: string[];
}

export async function createToken(db: Db | Tx, input: CreateTokenInput, secret?: string, personId: string | null = null) {
  if (input.role === "agent" && !input.workerId) {
    throw new WorkGraphError("VALIDATION", "an agent token needs a workerId");
  }
  if (input.role !== "agent" && input.workerId) {
    throw new WorkGraphError("VALIDATION", "only agent tokens are bound to a workerId");
  }
  const projects = [...new Set(input.projects ?? [])].sort();
  if (input.role === "admin" && projects.length > 0) {
    throw new WorkGraphError("VALIDATION", "an admin token cannot be scoped to projects");
  }
  if (input.role !== "agent" && (input.capabilities?.length ?? 0) > 0) {
    throw new WorkGraphError("VALIDATION", "only agent tokens have capabilities");
  }
  const unknownProject = await firstUnknownProject(db, projects);
  if (unknownProject !== undefined) throw notFound("project", unknownProject);
  const token = secret ?? newSecret(input.role);
  const id = await insertToken(db, {
    tokenHash: hashToken(token), role: input.role, workerId: input.workerId ?? null, label: input.label ?? null,
    projects, capabilities: [...new Set(input.capabilities ?? [])].sort(), personId,
  });
  return { id, token };
}

/** Every token, or only `personId`'s personal tokens. */
export async function listTokens(db: Db | Tx, personId?: string) {
  const rows = await selectTokens(db, personId);
  return rows.map((row) => ({
    id: row.id,
    role: row.role,
    workerId: row.workerId,
    label: row.label,
    projects: row.projects,
    capabilities: row.capabilities,
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt ? row.revokedAt.toISOString() : null,
    lastUsedAt: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
    personId: row.personId,
    personName: row.personName,
  }));
}

/** Revoking a token also ends every dashboard session logged in with it. */
export async function revokeToken(db: Db | Tx, id: string) {
  const row = await revokeTokenEndingSessions(db, id);
  if (!row) throw notFound("token", id);
  forgetAuthenticatedTokens();
  return { id: row.id, revokedAt: row.revokedAt.toISOString() };
}

/** The configured admin secret cannot be used; the message says what to do. `npm start` prints it and exits. */
export class AdminTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AdminTokenError";
  }
}

export const MIN_ADMIN_TOKEN_LENGTH = 32;

/** Checked before anything starts: a short WORK_GRAPH_ADMIN_TOKEN would be a guessable admin password. */
export function checkAdminTokenSetting(configured: string | undefined): void {
  if (configured !== undefined && configured.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new AdminTokenError(
      `WORK_GRAPH_ADMIN_TOKEN is ${configured.length} characters long; it must have at least ${MIN_ADMIN_TOKEN_LENGTH}. ` +
        "Generate one with `openssl rand -base64 32`, or unset it to get a generated admin token.",
    );
  }
}

// Any fixed number works: it only has to be the same in every instance sharing the database.
const ADMIN_BOOTSTRAP_LOCK = 727_001;

/**
 * First start: make sure an admin can get in. WORK_GRAPH_ADMIN_TOKEN, when set, is (also)
 * accepted as an admin token; otherwise, if no admin token exists, one is created and
 * returned so the start script can print it once. Instances starting together on one
 * database serialize on a transaction-level advisory lock, so exactly one of them creates
 * the token and none fails.
 */
export async function ensureAdminToken(db: Db, configured?: string): Promise<string | null> {
  checkAdminTokenSetting(configured);
  return inTransaction(db, async (tx) => {
    await lockAdminBootstrap(tx, ADMIN_BOOTSTRAP_LOCK);
    if (configured !== undefined) {
      const row = await upsertConfiguredAdminToken(tx, hashToken(configured), "WORK_GRAPH_ADMIN_TOKEN");
      if (row.revoked) {
        throw new AdminTokenError(
          `WORK_GRAPH_ADMIN_TOKEN is a revoked token (id ${row.id}). Set WORK_GRAPH_ADMIN_TOKEN to a new secret, ` +
            "or unset it and log in with another admin token.",
        );
      }
      if (row.role !== "admin") {
        throw new AdminTokenError(
          `WORK_GRAPH_ADMIN_TOKEN is an existing ${row.role} token (id ${row.id}), not an admin token. ` +
            "Set WORK_GRAPH_ADMIN_TOKEN to a different secret, or unset it and use an existing admin token.",
        );
      }
      return null;
    }
    if ((await countLiveAdminTokens(tx)) > 0) return null;
    const { token } = await createToken(tx, { role: "admin", label: "first-start" });
    return token;
  });
}
