import type { Limit } from "@work-graph/contract";
import type { Db } from "../db";
import { deleteLimit, upsertLimit } from "../sql/limits";

/** limits.set (rule 14): at most `maxLeases` live leases on items with concurrency key `key`; 0 pauses the key. */
export function setLimit(db: Db, input: { key: string; maxLeases: number }): Promise<Limit> {
  return upsertLimit(db, input.key, input.maxLeases);
}

/** limits.delete: the key is unlimited again; deleting a key that has no limit is not an error (the contract's answer is the same). */
export async function removeLimit(db: Db, input: { key: string }): Promise<{ key: string }> {
  await deleteLimit(db, input.key);
  return { key: input.key };
}
