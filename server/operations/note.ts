import type { Db } from "../db";
import { inTransaction } from "../database/transaction";
import { idempotencyScope } from "../domain/idempotency";
import type { Note } from "@work-graph/contract";
import type { Caller } from "../domain/types";
import { toNote } from "../domain/views";
import { lockCurrentLease } from "../sql/fencing";
import { idempotent } from "./idempotent";
import { insertNote } from "../sql/notes";

export interface NoteInput {
  leaseId: string;
  epoch: number;
  content: string;
  idempotencyKey?: string;
  workerId?: string;
}

export async function addNote(db: Db, caller: Caller, input: NoteInput): Promise<Note> {
  return inTransaction(
    db,
    (tx) =>
    idempotent(tx, idempotencyScope(caller, input.workerId), input.idempotencyKey, "leases.note", input, async () => {
      const { lease } = await lockCurrentLease(tx, caller, input.leaseId, input.epoch, input.workerId);
      return toNote(await insertNote(tx, lease, input.content));
    }),
    () => true,
  );
}
