import { Prisma } from "../generated/prisma/client";

/*
 * dashboard.summary's `unroutable` (rule 13 (capabilities route work)): a ready item no agent
 * could take, because no unrevoked agent token that may see its project (rule 12) has every
 * capability it requires. An empty `requires` is covered by any such token, so with no agent
 * token at all every ready item is unroutable.
 */

/** SQL over a work_items row `w`: some unrevoked agent token may see the item's project and has all it requires. */
export const AN_AGENT_CAN_TAKE = Prisma.sql`EXISTS (
  SELECT 1 FROM api_tokens t
   WHERE t.role = 'agent' AND t.revoked_at IS NULL AND w.requires <@ t.capabilities
     AND (t.projects = '{}' OR w.project_id = ANY(t.projects)))`;

/** SQL over `w`: the entries of its `requires` that no unrevoked agent token seeing its project has. */
export const CAPABILITIES_NO_AGENT_HAS = Prisma.sql`ARRAY(
  SELECT r FROM unnest(w.requires) r
   WHERE NOT EXISTS (SELECT 1 FROM api_tokens t
                      WHERE t.role = 'agent' AND t.revoked_at IS NULL AND r = ANY(t.capabilities)
                        AND (t.projects = '{}' OR w.project_id = ANY(t.projects)))
   ORDER BY r)`;
