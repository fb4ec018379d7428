import { Prisma } from "../generated/prisma/client";
import type { Db } from "../db";
import type { Note, Page } from "../domain/types";
import { NOTE_COLUMNS, toNote } from "../domain/views";
import { decodeCursor, encodeCursor } from "./cursor";

/** Oldest first, or newest first with `order: "desc"` (the item page's "older" paging); keyset-paginated either way. */
export async function listNotes(db: Db, input: { workItemId: string; limit: number; cursor?: string; order?: "asc" | "desc" }): Promise<Page<Note>> {
  const after = decodeCursor(input.cursor);
  const desc = input.order === "desc";
  const position = Prisma.sql`(SELECT c.created_at, c.id FROM notes c WHERE c.id::text = ${after})`;
  const rows = await db.$queryRaw<Parameters<typeof toNote>[0][]>`
    SELECT ${NOTE_COLUMNS} FROM notes n
     WHERE n.work_item_id = ${input.workItemId}
       ${after ? (desc ? Prisma.sql`AND (n.created_at, n.id) < ${position}` : Prisma.sql`AND (n.created_at, n.id) > ${position}`) : Prisma.empty}
     ORDER BY ${desc ? Prisma.sql`n.created_at DESC, n.id DESC` : Prisma.sql`n.created_at, n.id`} LIMIT ${input.limit + 1}`;
  const items = rows.slice(0, input.limit).map(toNote);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > input.limit && last ? encodeCursor(last.id) : null };
}
