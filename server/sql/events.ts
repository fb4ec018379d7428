import { Prisma } from "../generated/prisma/client";
import type { Tx } from "../database/transaction";

export interface NewEvent {
  workItemId: string;
  type: string;
  actor: string;
  leaseId?: string | null;
  epoch?: number | null;
  data?: Record<string, unknown>;
}

/** Appends events in the caller's transaction; their sequence numbers are assigned by the events trigger. */
export async function appendEvents(tx: Tx, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map(
    (event) => Prisma.sql`(${event.workItemId}, ${event.type}, ${event.actor}, ${event.leaseId ?? null}::uuid,
      ${event.epoch ?? null}::int, ${JSON.stringify(event.data ?? {})}::jsonb)`,
  );
  await tx.$executeRaw`INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data) VALUES ${Prisma.join(rows)}`;
}
