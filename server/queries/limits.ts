import type { Limit } from "@work-graph/contract";
import type { Db } from "../db";
import { selectLimits } from "../sql/limits";

/** limits.list: every limit by key, with its live leases. */
export function listLimits(db: Db): Promise<Limit[]> {
  return selectLimits(db);
}
