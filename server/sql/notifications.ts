import type pg from "pg";
import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import { queryHotPath } from "./hot-path";

/** Channel the events trigger notifies on commit (migration 20261203130000_event_notifications); the payload is the event type. */
export const EVENTS_CHANNEL = "work_graph_events";

/**
 * While this transaction-local setting is 'on', the events trigger does not notify (migration
 * 20261206000000_quiet_releases): release_lease decides itself whether its commit notifies.
 */
export const QUIET_EVENTS_SETTING = "work_graph.quiet_events";

/**
 * The payload an app instance relays after commits the database did not announce (claims,
 * renewals, notes, releases that readied nothing): new events for other instances' event
 * streams, nothing claimable (server/realtime/relay.ts).
 */
export const RELAYED = "relayed";

/** Tells every listening instance, after this statement commits, that events committed which made nothing claimable. */
export async function notifyRelayed(db: Db): Promise<void> {
  await queryHotPath(db, Prisma.sql`SELECT pg_notify(${EVENTS_CHANNEL}, ${RELAYED})::text AS sent`);
}

/** From now on `client` hears every committed event's type (server/realtime/listener.ts). */
export async function listenForEvents(client: pg.Client): Promise<void> {
  await client.query(`LISTEN ${EVENTS_CHANNEL}`);
}
