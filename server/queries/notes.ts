import type { Db } from "../db";
import type { Note, Page } from "../domain/types";
import { toNote } from "../domain/views";
import { selectNotes } from "../sql/notes";
import { decodeCursor, encodeCursor } from "./cursor";

/** Oldest first, or newest first with `order: "desc"` (the item page's "older" paging); keyset-paginated either way. */
export async function listNotes(db: Db, input: { workItemId: string; limit: number; cursor?: string; order?: "asc" | "desc" }): Promise<Page<Note>> {
  const rows = await selectNotes(db, { workItemId: input.workItemId, after: decodeCursor(input.cursor), desc: input.order === "desc", limit: input.limit + 1 });
  const items = rows.slice(0, input.limit).map(toNote);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > input.limit && last ? encodeCursor(last.id) : null };
}
