import type pg from "pg";

const TABLES: Record<string, string> = {
  work_items: "id",
  dependencies: "work_item_id, depends_on_id",
  leases: "work_item_id, epoch",
  notes: "id",
  attention_requests: "id",
  events: "sequence",
  idempotency_receipts: "scope, key",
};

/**
 * Every row of every domain table, as stored. Comparing two snapshots proves a refused call
 * changed nothing anywhere (not only on the item it named).
 */
export async function databaseSnapshot(client: pg.Client): Promise<Record<string, unknown[]>> {
  const snapshot: Record<string, unknown[]> = {};
  for (const [table, order] of Object.entries(TABLES)) {
    snapshot[table] = (await client.query(`SELECT * FROM ${table} ORDER BY ${order}`)).rows;
  }
  return snapshot;
}
