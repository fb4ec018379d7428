import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { lockCurrentLease } from "../domain/fencing";
import { idempotent, idempotencyScope } from "../domain/idempotency";
import type { Caller, Note } from "../domain/types";
import { NOTE_COLUMNS, toNote } from "../domain/views";
import { announceLocally } from "../realtime/wakeups";

export interface NoteInput {
  leaseId: string;
  epoch: number;
  content: string;
  idempotencyKey?: string;
  workerId?: string;
}

export async function addNote(db: Db, caller: Caller, input: NoteInput): Promise<Note> {
  const note = await inTransaction(db, (tx) =>
    idempotent(tx, idempotencyScope(caller, input.workerId), input.idempotencyKey, "leases.note", input, async () => {
      const { lease } = await lockCurrentLease(tx, caller, input.leaseId, input.epoch, input.workerId);
      const [note] = await tx.$queryRaw<Parameters<typeof toNote>[0][]>`
        WITH n AS (
          INSERT INTO notes (work_item_id, lease_id, epoch, worker_id, content)
          VALUES (${lease.workItemId}, ${lease.id}::uuid, ${lease.epoch}, ${lease.workerId}, ${input.content})
          RETURNING *
        ), logged AS (
          INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
          SELECT n.work_item_id, 'note.added', n.worker_id, n.lease_id, n.epoch, jsonb_build_object('noteId', n.id) FROM n
        )
        SELECT ${NOTE_COLUMNS} FROM n`;
      return toNote(note!);
    }),
  );
  announceLocally(db, ["note.added"]);
  return note;
}
