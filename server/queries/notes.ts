import type { Db } from "../db";
import type { Note, Page } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toNote } from "../domain/views";
import { selectNotes } from "../sql/notes";
import { decodeCursor, encodeCursor } from "./cursor";
import { itemOutsideScope } from "../sql/visibility";

/** Oldest first, or newest first with `order: "desc"` (the item page's "older" paging); keyset-paginated either way. */
/** An item of another project has no notes for a scoped caller, exactly like a missing item (rule 12 (projects scope tokens)). */
export async function listNotes(
  db: Db,
  caller: Pick<Caller, "projects">,
  input: { workItemId: string; limit: number; cursor?: string; order?: "asc" | "desc" },
): Promise<Page<Note>> {
  if (await itemOutsideScope(db, caller, input.workItemId)) return { items: [], nextCursor: null };
  const rows = await selectNotes(db, { workItemId: input.workItemId, after: decodeCursor(input.cursor), desc: input.order === "desc", limit: input.limit + 1 });
  const items = rows.slice(0, input.limit).map(toNote);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > input.limit && last ? encodeCursor(last.id) : null };
}
