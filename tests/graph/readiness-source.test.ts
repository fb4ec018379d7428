import { describe, expect } from "vitest";
import { isTerminalStage } from "@work-graph/contract";
import { STAGE_SQL, STRUCTURALLY_READY_SQL, UNLEASED_READY_SQL, WAITING_ON_SQL } from "../../server/domain/readiness";
import { databaseTest } from "../support/fixtures";

/* The readiness predicate is defined once; the partial claim index and the stage rule must agree with it. */

const it = databaseTest();

const conjuncts = (predicate: string) =>
  predicate.replace(/::text/g, "").replace(/[()]/g, "").split(/\s+AND\s+/i).map((part) => part.replace(/\s+/g, " ").trim()).sort();

describe("one readiness source", () => {
  it("the claim index's predicate in pg_indexes is STRUCTURALLY_READY_SQL", async ({ sql }) => {
    const { rows } = await sql.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE indexname = 'work_items_claim_order_idx'");
    const predicate = rows[0]!.indexdef.split(/ WHERE /)[1]!;
    expect(conjuncts(predicate)).toEqual(conjuncts(STRUCTURALLY_READY_SQL));
  });

  it.for(["work_items_claim_unleased_idx", "work_items_claim_unleased_project_idx"])("the unleased claim index %s's predicate in pg_indexes is UNLEASED_READY_SQL: the readiness predicate and no lease", async (index, { sql }) => {
    const { rows } = await sql.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE indexname = $1", [index]);
    const predicate = rows[0]!.indexdef.split(/ WHERE /)[1]!;
    expect(conjuncts(predicate)).toEqual(conjuncts(UNLEASED_READY_SQL));
    expect(conjuncts(UNLEASED_READY_SQL)).toEqual(conjuncts(`${STRUCTURALLY_READY_SQL} AND lease_expires_at IS NULL`));
  });

  it("WAITING_ON_SQL lists the conditions STAGE_SQL decides by: its first is the stage, and it is empty exactly when ready or terminal", async ({ sql }) => {
    const stage = STAGE_SQL.strings.join("?");
    const waitingOn = WAITING_ON_SQL.strings.join("?");
    expect(WAITING_ON_SQL.values).toEqual([]);
    const { rows } = await sql.query<{ stage: string; waiting_on: string[] }>(`
      WITH w AS (
        SELECT s.status, o AS open_dependency_count, a AS ancestor_dependency_count, c AS open_child_count, b AS blocking_attention_count,
               CASE WHEN l THEN work_graph_now() + interval '1 minute' END AS lease_expires_at,
               CASE WHEN g THEN work_graph_now() + interval '1 minute' END AS not_before
          FROM unnest(ARRAY['open', 'released', 'cancelled']) s(status), generate_series(0, 1) o, generate_series(0, 1) a,
               generate_series(0, 1) c, generate_series(0, 1) b, unnest(ARRAY[true, false]) l, unnest(ARRAY[true, false]) g
      )
      SELECT (${stage}) AS stage, (${waitingOn}) AS waiting_on FROM w`);
    expect(rows).toHaveLength(3 * 2 ** 6);
    for (const row of rows) {
      if (row.stage === "ready" || isTerminalStage(row.stage)) expect(row.waiting_on).toEqual([]);
      else expect(row.waiting_on[0]).toBe(row.stage);
    }
    expect(new Set(rows.flatMap((row) => row.waiting_on))).toEqual(new Set(["needs_attention", "leased", "waiting_on_children", "blocked", "scheduled"]));
    expect(rows.some((row) => row.waiting_on.length === 5)).toBe(true);
  });

  it("STAGE_SQL says 'ready' exactly for structurally ready items without a live lease whose time gate is open", async ({ sql }) => {
    const stage = STAGE_SQL.strings.join("?");
    expect(STAGE_SQL.values).toEqual([]);
    const { rows } = await sql.query<{ mismatches: number }>(`
      WITH w AS (
        SELECT s.status, o AS open_dependency_count, a AS ancestor_dependency_count, c AS open_child_count, b AS blocking_attention_count,
               CASE WHEN l THEN work_graph_now() + interval '1 minute' END AS lease_expires_at,
               CASE WHEN g THEN work_graph_now() + interval '1 minute' END AS not_before
          FROM unnest(ARRAY['open', 'released', 'cancelled']) s(status), generate_series(0, 1) o, generate_series(0, 1) a,
               generate_series(0, 1) c, generate_series(0, 1) b, unnest(ARRAY[true, false]) l, unnest(ARRAY[true, false]) g
      )
      SELECT count(*)::int AS mismatches FROM w
       WHERE ((${stage}) = 'ready') IS DISTINCT FROM ((${STRUCTURALLY_READY_SQL}) AND lease_expires_at IS NULL AND not_before IS NULL)`);
    expect(rows[0]!.mismatches).toBe(0);
  });
});
