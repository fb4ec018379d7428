import type { Db } from "../../server/db";
import { authenticate } from "../../server/auth/tokens";
import type { Role } from "@work-graph/contract";
import type { Caller } from "../../server/domain/types";
import { newRequestId } from "../../server/http/request-id";
import { createCaller } from "../../server/trpc/root";
import type { Actors } from "../support/fixtures";

/** A caller acting with a token the admin creates through tokens.create (scopes and capabilities as given). */
export async function scopedCaller(
  db: Db,
  people: Actors,
  token: { role: Exclude<Role, "admin">; workerId?: string; projects?: string[]; capabilities?: string[] },
) {
  const { token: secret } = await people.admin.tokens.create(token);
  const caller = (await authenticate(db, secret)) as Caller;
  return createCaller({ db, caller, requestId: newRequestId() });
}
