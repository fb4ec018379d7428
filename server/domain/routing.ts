import { Prisma } from "../generated/prisma/client";
import { CLEAR_CONTINUITY, OPEN_GATE } from "./readiness";
import { inProjects } from "./scope";
import { WorkGraphError } from "../errors";
import type { Caller } from "./types";

/*
 * Queue policy routing (API.md rules 12–15): which claimable items a claim may take. The next
 * claim (server/sql/claims.ts) and the queue view (server/queries/work-items.ts queue) filter
 * with the same fragments, so the queue's head is what the next claim takes.
 *
 * Concurrency limits (rule 14). A lease records the concurrency key its item had at claim
 * (leases.concurrency_key, immutable); the live leases on key K are the unended, unexpired
 * leases with that key (LIVE_LEASES_ON). An item whose key has a `limits` row is leased only in
 * a transaction that
 *   (a) holds the item's row lock (the next claim's SKIP LOCKED pick, or the named claim's lock),
 *   (b) then locks the key's `limits` row FOR UPDATE,
 *   (c) then counts the key's live leases in a NEW statement: under READ COMMITTED each
 *       statement takes a fresh snapshot, and one taken before the key lock was granted would
 *       miss the lease a concurrent claimer committed while we waited for that lock,
 *   (d) and leases only when that count is below max_leases.
 * Lock order: item row, then key row. Nothing locks an item row while holding a key row
 * (limits.set and limits.delete lock only the key row; a next claim that finds a key full
 * rolls back to a savepoint, releasing both locks, before it picks another item), so the two
 * cannot deadlock. KEY_NOT_FULL in a one-statement claim is only a hint (its snapshot may be
 * stale): it steers next claims past full keys, and the transaction above decides.
 */

/** Whom a claim or a queue view routes for: the caller's project scope, a project filter, and capabilities (null: any). */
export interface Routing {
  projects: Caller["projects"];
  projectId?: string;
  capabilities: string[] | null;
}

/** Rule 13: the item's `requires` are all among `capabilities` (over alias `w`); null: no filter. */
export function CAPABLE(capabilities: string[] | null): Prisma.Sql {
  return capabilities === null ? Prisma.sql`true` : Prisma.sql`w.requires <@ ${capabilities}::text[]`;
}

/** Rule 14: the live leases on concurrency key `key` (SQL text expression), through leases_unended_concurrency_key_idx. */
export function LIVE_LEASES_ON(key: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(SELECT count(*)::int FROM leases kl
     WHERE kl.concurrency_key = ${key} AND kl.ended_at IS NULL AND kl.expires_at > work_graph_now())`;
}

/** Rule 14: the item (alias `w`) has no concurrency key with a limit that its live leases reach, in this statement's snapshot. */
export const KEY_NOT_FULL = Prisma.sql`(w.concurrency_key IS NULL OR NOT EXISTS (
    SELECT 1 FROM limits k WHERE k.key = w.concurrency_key AND k.max_leases <= ${LIVE_LEASES_ON(Prisma.sql`k.key`)}))`;

/** Rule 14: the item's (alias `w`) concurrency key has a limit: its lease must be decided under the key's lock. */
export const KEY_LIMITED = Prisma.sql`EXISTS (SELECT 1 FROM limits k WHERE k.key = w.concurrency_key)`;

/** Rules 12, 13, 15 and the rule 14 hint: what a claim routed by `routing` may take, over alias `w`. */
export function ROUTED(routing: Routing): Prisma.Sql {
  return Prisma.sql`${inProjects(routing, routing.projectId)} AND ${CAPABLE(routing.capabilities)} AND ${OPEN_GATE} AND ${KEY_NOT_FULL}`;
}

/** The capabilities in `requires` that `capabilities` lacks (rule 13's `missing`). */
export function missingCapabilities(requires: string[], capabilities: string[] | null): string[] {
  return capabilities === null ? [] : requires.filter((needed) => !capabilities.includes(needed));
}

/**
 * Rule 16 (hand back): the item-row change of a `returned` lease, for endLeasesSql's
 * itemChanges: no continuity preference, and with `retryAfterSeconds` a time gate (rule 15)
 * that many seconds after database now.
 */
export function HAND_BACK_ITEM_CHANGES(retryAfterSeconds: number | undefined): Prisma.Sql {
  if (retryAfterSeconds === undefined) return CLEAR_CONTINUITY;
  return Prisma.sql`${CLEAR_CONTINUITY}, not_before = l.ended_at + make_interval(secs => ${retryAfterSeconds})`;
}

/**
 * Rule 13: the capabilities an agent's claim or queue routes by: a subset of its token's
 * (FORBIDDEN otherwise), by default the token's. Other roles: what they asked for (undefined:
 * the caller decides the default).
 */
export function agentCapabilities(caller: Pick<Caller, "role" | "capabilities">, requested: string[] | undefined): string[] | undefined {
  if (caller.role !== "agent") return requested;
  if (requested === undefined) return caller.capabilities;
  const beyond = requested.filter((capability) => !caller.capabilities.includes(capability));
  if (beyond.length > 0) {
    throw new WorkGraphError("FORBIDDEN", `this token does not have the capabilities ${beyond.join(", ")}`, { capabilities: beyond });
  }
  return requested;
}
