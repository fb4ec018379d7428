import { describe, expect } from "vitest";
import { transactionRetries } from "../../server/database/transaction";
import { databaseTest, lockWaiters } from "../support/fixtures";
import type { TestDatabase } from "../support/database";

/*
 * Every operation takes its row locks in one global order (by id), so the interleavings that
 * used to deadlock (and cost deadlock_timeout plus a silent replay) now only wait. Each test
 * forces its interleaving with raw lock holders, gates on pg_locks (who is waiting), and then
 * checks that no transaction had to be retried.
 */

const it = databaseTest({ poolSize: 10 });

const totalRetries = () => Object.values(transactionRetries()).reduce((sum, n) => sum + n, 0);

/** A raw transaction holding row locks until released. */
async function holdRows(database: TestDatabase, statement: string, values: unknown[]) {
  const client = await database.connect();
  await client.query("BEGIN");
  await client.query(statement, values);
  return () => client.query("COMMIT");
}

describe("lock order", () => {
  it("release of a child vs a new dependency on its parent", async ({ database, sql, people: world }) => {
    const { operator, agent } = world;
    const worker = await agent("lo-child-worker");
    await operator.workItems.create({ id: "lo1-b-parent", title: "Parent" });
    await operator.workItems.create({ id: "lo1-c-blocker", title: "Blocker" });
    await operator.workItems.create({ id: "lo1-a-child", title: "Child", parentId: "lo1-b-parent" });
    const { lease } = (await worker.leases.claim({ workItemId: "lo1-a-child", durationSeconds: 600 }))!;
    const before = totalRetries();

    const release = await holdRows(database, "SELECT 1 FROM work_items WHERE id = $1 FOR UPDATE", ["lo1-c-blocker"]);
    const adding = operator.workItems.addDependency({ workItemId: "lo1-b-parent", dependsOnId: "lo1-c-blocker" });
    await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(1);
    const releasing = worker.leases.release({ leaseId: lease.id, epoch: 1, evidence: "done" });
    await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(2);
    await release();
    await Promise.all([adding, releasing]);

    expect(totalRetries()).toBe(before);
    expect((await operator.workItems.get({ id: "lo1-b-parent" })).stage).toBe("blocked");
    expect((await operator.workItems.get({ id: "lo1-a-child" })).stage).toBe("released");
  }, 60_000);

  it("release of a blocker vs decomposition of its sibling into children that depend on it", async ({ database, sql, people: world }) => {
    const { operator, agent } = world;
    const worker = await agent("lo-sibling-worker");
    await operator.workItems.create({ id: "lo2-p-parent", title: "Parent" });
    await operator.workItems.create({ id: "lo2-a-x", title: "Blocker X", parentId: "lo2-p-parent", priority: 5 });
    await operator.workItems.create({ id: "lo2-s-sibling", title: "Sibling", parentId: "lo2-p-parent", priority: 5 });
    const x = (await worker.leases.claim({ workItemId: "lo2-a-x", durationSeconds: 600 }))!;
    const s = (await worker.leases.claim({ workItemId: "lo2-s-sibling", durationSeconds: 600 }))!;
    const before = totalRetries();

    // The release stops at X's lease row (held here); the decomposition then needs X and the parent.
    const release = await holdRows(database, "SELECT 1 FROM leases WHERE id = $1 FOR UPDATE", [x.lease.id]);
    const releasing = worker.leases.release({ leaseId: x.lease.id, epoch: 1, evidence: "done" });
    await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(1);
    const decomposing = worker.leases.decompose({
      leaseId: s.lease.id, epoch: 1, children: [{ id: "lo2-s-part", title: "Part", dependsOn: ["lo2-a-x"] }],
    });
    await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(2);
    await release();
    await Promise.all([releasing, decomposing]);

    expect(totalRetries()).toBe(before);
    expect((await operator.workItems.get({ id: "lo2-s-part" })).stage).toBe("ready");
    expect((await operator.workItems.get({ id: "lo2-p-parent" })).openChildCount).toBe(1);
  }, 60_000);

  it("two releases with shared dependents", async ({ database, sql, people: world }) => {
    const { operator, agent } = world;
    const worker = await agent("lo-shared-worker");
    await operator.workItems.create({ id: "lo3-a-blocker", title: "A", priority: 9 });
    await operator.workItems.create({ id: "lo3-b-blocker", title: "B", priority: 9 });
    await operator.workItems.create({ id: "lo3-d1", title: "D1" });
    await operator.workItems.create({ id: "lo3-d2", title: "D2" });
    // A's edges stored D1 then D2, B's D2 then D1: a join visits them in opposite orders.
    await operator.workItems.addDependency({ workItemId: "lo3-d1", dependsOnId: "lo3-a-blocker" });
    await operator.workItems.addDependency({ workItemId: "lo3-d2", dependsOnId: "lo3-a-blocker" });
    await operator.workItems.addDependency({ workItemId: "lo3-d2", dependsOnId: "lo3-b-blocker" });
    await operator.workItems.addDependency({ workItemId: "lo3-d1", dependsOnId: "lo3-b-blocker" });
    const a = (await worker.leases.claim({ workItemId: "lo3-a-blocker", durationSeconds: 600 }))!;
    const b = (await worker.leases.claim({ workItemId: "lo3-b-blocker", durationSeconds: 600 }))!;
    const before = totalRetries();

    const releaseD1 = await holdRows(database, "SELECT 1 FROM work_items WHERE id = $1 FOR UPDATE", ["lo3-d1"]);
    const releaseD2 = await holdRows(database, "SELECT 1 FROM work_items WHERE id = $1 FOR UPDATE", ["lo3-d2"]);
    const releasingA = worker.leases.release({ leaseId: a.lease.id, epoch: 1, evidence: "A done" });
    await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(1);
    const releasingB = worker.leases.release({ leaseId: b.lease.id, epoch: 1, evidence: "B done" });
    await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(2);
    await Promise.all([releaseD1(), releaseD2()]);
    await Promise.all([releasingA, releasingB]);

    expect(totalRetries()).toBe(before);
    for (const id of ["lo3-d1", "lo3-d2"]) expect((await operator.workItems.get({ id })).stage).toBe("ready");
  }, 60_000);
});
