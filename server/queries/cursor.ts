import { WorkGraphError } from "../errors";

/** Opaque keyset cursors: the id of the last row returned; the next page starts after that row's (created_at, id). */
export const encodeCursor = (lastId: string): string => Buffer.from(lastId).toString("base64url");

export function decodeCursor(cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!id || encodeCursor(id) !== cursor) throw new WorkGraphError("VALIDATION", "cursor is not one this API returned");
  return id;
}
