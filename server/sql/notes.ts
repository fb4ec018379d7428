import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import type { Tx } from "../database/transaction";
import { NOTE_COLUMNS, type LeaseRow, type toNote } from "../domain/views";

export type NoteRow = Parameters<typeof toNote>[0];

/** Records a note under the (fenced) lease, with its `note.added` event, in one statement. */
export async function insertNote(tx: Tx, lease: LeaseRow, content: string): Promise<NoteRow> {
  const [note] = await tx.$queryRaw<NoteRow[]>`
    WITH n AS (
      INSERT INTO notes (work_item_id, lease_id, epoch, worker_id, content)
      VALUES (${lease.workItemId}, ${lease.id}::uuid, ${lease.epoch}, ${lease.workerId}, ${content})
      RETURNING *
    ), logged AS (
      INSERT INTO events (work_item_id, type, actor, lease_id, epoch, data)
      SELECT n.work_item_id, 'note.added', n.worker_id, n.lease_id, n.epoch, jsonb_build_object('noteId', n.id) FROM n
    )
    SELECT ${NOTE_COLUMNS} FROM n`;
  return note!;
}

/** Up to `limit` notes of an item after note `after` (its id) in the given order (oldest first, or newest first with desc). */
export async function selectNotes(db: Db, input: { workItemId: string; after: string | null; desc: boolean; limit: number }): Promise<NoteRow[]> {
  const { after, desc } = input;
  const position = Prisma.sql`(SELECT c.created_at, c.id FROM notes c WHERE c.id::text = ${after})`;
  return db.$queryRaw<NoteRow[]>`
    SELECT ${NOTE_COLUMNS} FROM notes n
     WHERE n.work_item_id = ${input.workItemId}
       ${after ? (desc ? Prisma.sql`AND (n.created_at, n.id) < ${position}` : Prisma.sql`AND (n.created_at, n.id) > ${position}`) : Prisma.empty}
     ORDER BY ${desc ? Prisma.sql`n.created_at DESC, n.id DESC` : Prisma.sql`n.created_at, n.id`} LIMIT ${input.limit}`;
}
