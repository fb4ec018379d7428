import type { Db } from "../db";
import { selectLimits, type LimitRow } from "../sql/limits";

/** limits.list: every limit by key, with its live leases. */
export function listLimits(db: Db): Promise<LimitRow[]> {
  return selectLimits(db);
}
