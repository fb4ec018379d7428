import type pg from "pg";
import { authenticate, createToken, forgetAuthenticatedTokens } from "../../server/auth/tokens";
import type { Instance } from "../../server/instance";
import type { Caller } from "../../server/domain/types";
import { newRequestId } from "../../server/http/request-id";
import { createCaller } from "../../server/trpc/root";

/**
 * Queue-policy columns set directly in SQL (the create/update inputs for them are another
 * helper's part of issue 24): `requires`, `concurrencyKey`, `notBefore` (seconds from database
 * now, or null) and `projectId` (the project is created when missing).
 */
export async function setPolicy(
  sql: pg.Client,
  ids: string[],
  policy: { requires?: string[]; concurrencyKey?: string | null; notBeforeInSeconds?: number | null; projectId?: string },
) {
  if (policy.projectId !== undefined) {
    await sql.query("INSERT INTO projects (id, name) VALUES ($1, $1) ON CONFLICT DO NOTHING", [policy.projectId]);
    await sql.query("UPDATE work_items SET project_id = $2 WHERE id = ANY($1)", [ids, policy.projectId]);
  }
  if (policy.requires !== undefined) await sql.query("UPDATE work_items SET requires = $2 WHERE id = ANY($1)", [ids, [...policy.requires].sort()]);
  if (policy.concurrencyKey !== undefined) await sql.query("UPDATE work_items SET concurrency_key = $2 WHERE id = ANY($1)", [ids, policy.concurrencyKey]);
  if (policy.notBeforeInSeconds !== undefined) {
    await sql.query("UPDATE work_items SET not_before = work_graph_clock() + make_interval(secs => $2::float8) WHERE id = ANY($1)", [
      ids,
      policy.notBeforeInSeconds,
    ]);
  }
}

/** A token with queue-policy scope set in SQL: its token string and an in-process API caller. */
export async function scopedToken(
  instance: Instance,
  sql: pg.Client,
  role: "agent" | "operator" | "admin",
  options: { workerId?: string; capabilities?: string[]; projects?: string[] } = {},
) {
  const { db } = instance;
  const { id, token } = await createToken(db, { role, workerId: options.workerId, label: "queue-policy" });
  await sql.query("UPDATE api_tokens SET capabilities = $2, projects = $3 WHERE id = $1", [id, [...(options.capabilities ?? [])].sort(), options.projects ?? []]);
  forgetAuthenticatedTokens(db);
  const caller = (await authenticate(db, token)) as Caller;
  return { token, caller, api: createCaller({ instance, db, caller, requestId: newRequestId() }) };
}
