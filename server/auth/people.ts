import type { Person } from "@work-graph/contract";
import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import type { Caller } from "../domain/types";
import { notFound, WorkGraphError } from "../errors";
import { tokenOwner } from "../sql/auth";
import { disablePersonEndingAccess, enablePerson as enablePersonRow, endAccessOfUngrouped, selectAdminContacts, selectPeople, upsertSignedInPerson, type PersonRow } from "../sql/people";
import { isPersonSession } from "./sessions";
import { createToken, forgetAuthenticatedTokens, listTokens, revokeToken } from "./tokens";

/** people.list answers at most this many (the most recently seen). */
export const PEOPLE_LIMIT = 1000;

function toPerson(row: PersonRow): Person {
  return {
    id: row.id,
    issuer: row.issuer,
    subject: row.subject,
    email: row.email,
    name: row.name,
    role: row.role,
    createdAt: row.createdAt.toISOString(),
    lastSeenAt: row.lastSeenAt.toISOString(),
    disabledAt: row.disabledAt ? row.disabledAt.toISOString() : null,
  };
}

/** Records a sign-in the provider vouched for (role recomputed from the groups); null when the person is disabled. */
export async function signInPerson(
  db: Db,
  person: { issuer: string; subject: string; email: string | null; name: string | null; role: "operator" | "admin" },
): Promise<Person | null> {
  const row = await upsertSignedInPerson(db, person);
  return row.disabledAt ? null : toPerson(row);
}

export async function listPeople(db: Db | Tx): Promise<Person[]> {
  return (await selectPeople(db, PEOPLE_LIMIT)).map(toPerson);
}

/** A known person left every group: their sessions end and their personal tokens are revoked at once. */
export async function refuseUngroupedPerson(db: Db, issuer: string, subject: string): Promise<void> {
  if ((await endAccessOfUngrouped(db, issuer, subject)) > 0) forgetAuthenticatedTokens();
}

/** Admins a refused person can ask ("Dana Li <dana@example.com>"), at most three. */
export async function adminContacts(db: Db | Tx): Promise<string[]> {
  const rows = await selectAdminContacts(db, 3);
  return rows.map(({ name, email }) => (name && email ? `${name} <${email}>` : (name ?? email)!));
}

/** Disabling ends the person's sessions (at their next request) and revokes their personal tokens. */
export async function disablePerson(db: Db | Tx, id: string): Promise<Person> {
  const row = await disablePersonEndingAccess(db, id);
  if (!row) throw notFound("person", id);
  forgetAuthenticatedTokens();
  return toPerson(row);
}

export async function enablePerson(db: Db | Tx, id: string): Promise<Person> {
  const row = await enablePersonRow(db, id);
  if (!row) throw notFound("person", id);
  return toPerson(row);
}

function signedInPerson(caller: Caller): NonNullable<Caller["person"]> {
  if (!caller.person) throw new WorkGraphError("FORBIDDEN", "personal tokens are for people who signed in with the identity provider");
  return caller.person;
}

/**
 * A token for the signed-in person's own CLI: operator role (a person is an operator or an
 * admin, so never more than theirs), its actions attributed to the person. Only from a sign-in
 * session: a personal token cannot mint more of itself.
 */
export async function createPersonalToken(db: Db | Tx, caller: Caller, label: string | undefined) {
  if (!isPersonSession(caller)) throw new WorkGraphError("FORBIDDEN", "personal tokens are created by a person signed in to the dashboard");
  const person = signedInPerson(caller);
  return createToken(db, { role: "operator", label: label ?? `cli of ${person.name}`.slice(0, 200) }, undefined, person.id);
}

/** The signed-in person's own tokens; an admin may name another person. */
export async function listPersonalTokens(db: Db | Tx, caller: Caller, personId: string | undefined) {
  if (personId !== undefined && caller.role !== "admin") throw new WorkGraphError("FORBIDDEN", "only an admin may list another person's tokens");
  return listTokens(db, personId ?? signedInPerson(caller).id);
}

/** The owner revokes their own personal token; an admin any token. */
export async function revokePersonalToken(db: Db | Tx, caller: Caller, id: string) {
  const owner = await tokenOwner(db, id);
  if (!owner || (caller.role !== "admin" && (owner.personId === null || owner.personId !== caller.person?.id))) throw notFound("token", id);
  return revokeToken(db, id);
}
