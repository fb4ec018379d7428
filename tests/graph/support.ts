import type pg from "pg";
import { expect, vi } from "vitest";
import type { Stage, WorkItem } from "@work-graph/contract";
import { callerAs } from "../support/app";
import type { TestDatabase } from "../support/database";
import { databaseTest } from "../support/fixtures";

/** Helpers shared by tests/graph and tests/attention (real PostgreSQL, in-process tRPC callers). */

/**
 * databaseTest with `actors` (operator, probe, agents by worker id). By default every test has a
 * database of its own, so "the queue holds exactly the ready items" is checked globally, and
 * continuity (rule 9, covered by tests/attention/continuity.test.ts) is off, so the queue is in
 * plain priority order.
 */
export function graphTest(options: { poolSize?: number; scope?: "file" | "test"; continuity?: boolean } = {}) {
  const scope = options.scope ?? "test";
  return databaseTest({ ...options, scope })
    .extend("actors", { scope } as { scope: "file" }, ({ database }) => actorsFor(database))
    .extend("continuityOff", { auto: true }, () => {
      if (!options.continuity) vi.stubEnv("WORK_GRAPH_CONTINUITY_SECONDS", "0");
    });
}

export type Api = Awaited<ReturnType<typeof callerAs>>["api"];

export interface Actors {
  operator: Api;
  /** An agent that only ever probes (named claims that must be refused, next-claims that must be empty). */
  probe: Api;
  agent(workerId: string): Promise<Api>;
}

export async function actorsFor(database: TestDatabase): Promise<Actors> {
  const operator = (await callerAs(database.db, "operator")).api;
  const probe = (await callerAs(database.db, "agent", "probe")).api;
  const agents = new Map<string, Api>();
  return {
    operator,
    probe,
    async agent(workerId: string) {
      if (!agents.has(workerId)) agents.set(workerId, (await callerAs(database.db, "agent", workerId)).api);
      return agents.get(workerId)!;
    },
  };
}

export interface Refusal {
  reason: string | undefined;
  code: string | undefined;
  detail: Record<string, unknown>;
}

/** Awaits `promise`, which must fail with a WorkGraphError, and returns its reason, tRPC code and detail. */
export async function refused(promise: Promise<unknown>): Promise<Refusal> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: string; cause?: { reason?: string; detail?: Record<string, unknown> } };
    return { reason: e.cause?.reason, code: e.code, detail: e.cause?.detail ?? {} };
  }
  throw new Error("expected the call to be refused, but it succeeded");
}

/** Every work item, through the paged list API. */
export async function allItems(api: Api): Promise<Map<string, WorkItem>> {
  const items = new Map<string, WorkItem>();
  let cursor: string | undefined;
  do {
    const page = await api.workItems.list({ limit: 200, cursor });
    for (const item of page.items) items.set(item.id, item);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return items;
}

/** Queue order of API.md rule 10 (without continuity): priority desc, then createdAt, then id. */
export function claimOrder(a: WorkItem, b: WorkItem): number {
  return b.priority - a.priority || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
}

/**
 * Asserts the stage of each listed item and that the claim index agrees with the stages, for a
 * database that holds only this test's items:
 * - `workItems.queue` holds exactly the ready items (all of them), in queue order
 *   (`queue` pins the exact order when given);
 * - `workItems.list({ stage: "ready" })` agrees;
 * - a named claim of every listed open, non-ready item is refused with NOT_CLAIMABLE and that stage;
 * - when nothing is ready, a next-claim returns null.
 * Returns all items by id.
 */
export async function expectStages(actors: Actors, expected: Record<string, Stage>, queue?: string[]): Promise<Map<string, WorkItem>> {
  const items = await allItems(actors.operator);
  const actual = Object.fromEntries(Object.keys(expected).map((id) => [id, items.get(id)?.stage ?? "missing"]));
  expect(actual).toEqual(expected);

  const ready = [...items.values()].filter((item) => item.stage === "ready");
  const queued = await actors.operator.workItems.queue({ limit: 200 });
  expect(queued.map((item) => item.id).sort()).toEqual(ready.map((item) => item.id).sort());
  expect(queued.every((item) => item.stage === "ready")).toBe(true);
  // Order: the ids in priority desc / createdAt order (ties inside one millisecond may be in either order here).
  for (let i = 1; i < queued.length; i++) {
    const [a, b] = [queued[i - 1]!, queued[i]!];
    expect(a.priority > b.priority || (a.priority === b.priority && a.createdAt <= b.createdAt), `${a.id} before ${b.id}`).toBe(true);
  }
  if (queue) expect(queued.map((item) => item.id)).toEqual(queue);
  const listedReady = await actors.operator.workItems.list({ stage: "ready", limit: 200 });
  expect(listedReady.items.map((item) => item.id).sort()).toEqual(ready.map((item) => item.id).sort());

  for (const [id, stage] of Object.entries(expected)) {
    if (stage === "ready" || stage === "released" || stage === "cancelled") continue;
    expect(await refused(actors.probe.leases.claim({ workItemId: id }))).toMatchObject({ reason: "NOT_CLAIMABLE", detail: { stage } });
  }
  if (ready.length === 0) expect(await actors.probe.leases.claim({})).toBeNull();
  return items;
}

/** Next-claim by `agent`: it must take `expectedId`, which must also head that agent's queue. */
export async function claimNext(agent: Api, expectedId: string, durationSeconds = 600) {
  const [head] = await agent.workItems.queue({ limit: 1 });
  expect(head?.id).toBe(expectedId);
  const claimed = await agent.leases.claim({ durationSeconds });
  expect(claimed?.workItem.id).toBe(expectedId);
  return claimed!;
}

/** Named claim + release: the item must be ready. */
export async function claimAndRelease(agent: Api, id: string) {
  const claimed = (await agent.leases.claim({ workItemId: id, durationSeconds: 600 }))!;
  return agent.leases.release({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, evidence: `finished ${id}` });
}

/** Row counts of the tables an edit writes, to prove a refused call changed nothing. */
export async function tableCounts(client: pg.Client) {
  const { rows } = await client.query<Record<string, number>>(`
    SELECT (SELECT count(*)::int FROM work_items) AS work_items, (SELECT count(*)::int FROM dependencies) AS dependencies,
           (SELECT count(*)::int FROM leases) AS leases, (SELECT count(*)::int FROM events) AS events,
           (SELECT count(*)::int FROM attention_requests) AS attention_requests`);
  return rows[0]!;
}

/** `call` must be refused as `expected` and leave every row of the tables an edit writes as it was. */
export async function expectUnchanged(client: pg.Client, call: () => Promise<unknown>, expected: { reason: string; detail?: Record<string, unknown> }) {
  const before = { counts: await tableCounts(client), items: await itemRows(client) };
  expect(await refused(call())).toMatchObject(expected);
  expect({ counts: await tableCounts(client), items: await itemRows(client) }).toEqual(before);
}

/** The stored readiness counters and lease columns of every item (to prove a refused call changed nothing). */
export async function itemRows(client: pg.Client) {
  const { rows } = await client.query(`
    SELECT id, parent_id, status, priority, open_dependency_count, ancestor_dependency_count, open_child_count,
           blocking_attention_count, current_lease_id, lease_expires_at, last_epoch, previous_worker_id, updated_at
      FROM work_items ORDER BY id`);
  return rows;
}
