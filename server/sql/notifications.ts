import type pg from "pg";

/** Channel the events trigger notifies on commit (migration 20261203130000_event_notifications); the payload is the event type. */
export const EVENTS_CHANNEL = "work_graph_events";

/** From now on `client` hears every committed event's type (server/realtime/listener.ts). */
export async function listenForEvents(client: pg.Client): Promise<void> {
  await client.query(`LISTEN ${EVENTS_CHANNEL}`);
}
