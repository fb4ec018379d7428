import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../db";
import { ROLES } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { deleteSession, findSessionOwner, insertSession } from "../sql/auth";
import { callerFromToken } from "./tokens";

/** A dashboard session lasts a working day; after that the token is pasted again. */
export const SESSION_SECONDS = 12 * 60 * 60;

/** Roles that may use the dashboard: humans. Agent tokens are refused at login and on its pages. */
export const DASHBOARD_ROLES: ReadonlySet<Caller["role"]> = new Set(ROLES.filter((role) => role !== "agent"));

// 32 random bytes, base64url: the only thing the wg_session cookie carries.
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
/** The tokenId of a person's sign-in session (it has no token): this prefix and the person's id. */
const PERSON_SESSION = "person-session:";
export const isPersonSession = (caller: Caller) => caller.tokenId.startsWith(PERSON_SESSION);

const hashSessionId = (sessionId: string) => createHash("sha256").update(sessionId).digest("hex");

/**
 * Logs a token in: a new session bound to it, expiring SESSION_SECONDS from now on the
 * database clock. Sessions that have expired are deleted on the way, so the table stays small.
 */
export async function createSession(db: Db, tokenId: string): Promise<string> {
  const sessionId = randomBytes(32).toString("base64url");
  await insertSession(db, hashSessionId(sessionId), { tokenId }, SESSION_SECONDS);
  return sessionId;
}

/** Signs a person in (after the identity provider vouched for them): a new session bound to the person. */
export async function createPersonSession(db: Db, personId: string): Promise<string> {
  const sessionId = randomBytes(32).toString("base64url");
  await insertSession(db, hashSessionId(sessionId), { personId }, SESSION_SECONDS);
  return sessionId;
}

/**
 * The caller of a live session: not expired (database clock), and its token not revoked or its
 * person not disabled. Anything else, malformed ids included: null.
 */
export async function sessionCaller(db: Db, sessionId: string): Promise<Caller | null> {
  if (!SESSION_ID.test(sessionId)) return null;
  const owner = await findSessionOwner(db, hashSessionId(sessionId));
  if (owner?.token) return callerFromToken(owner.token);
  if (!owner?.person) return null;
  const { id, role, actor, name } = owner.person;
  return { tokenId: `${PERSON_SESSION}${id}`, role, workerId: null, actor, projects: [], capabilities: [], person: { id, name } };
}

/** Logout: the session is gone, so a copied cookie stops working too. */
export async function endSession(db: Db, sessionId: string): Promise<void> {
  if (!SESSION_ID.test(sessionId)) return;
  await deleteSession(db, hashSessionId(sessionId));
}
