import { describe, expect } from "vitest";
import { addDependency } from "../../server/operations/dependencies";
import { callerAs } from "../support/app";
import { graphTest } from "./support";
import { lockWaiters } from "../support/fixtures";
import { testInstance } from "../support/database";

const it = graphTest({ poolSize: 10, scope: "file", continuity: true })
  // A second, independent client: its own pool, so the two racers use different connections.
  .extend("second", { scope: "file" }, ({ database }, { onCleanup }) => {
    const instance = testInstance(database.url, { poolSize: 4 });
    onCleanup(() => instance.close());
    return instance.db;
  })
  .extend("operatorCaller", { scope: "file" }, async ({ database }) => (await callerAs(database.instance, "operator")).caller);

const GRAPH_LOCK = "SELECT pg_advisory_xact_lock(hashtext('work_graph.graph_shape'))";

describe("graph edits under concurrency", () => {
  it("two connections racing to add a→b and b→a: exactly one succeeds, every time", async ({ database, sql, actors, second, operatorCaller }) => {
    const gate = await database.connect();
    const iterations = 60;
    for (let i = 0; i < iterations; i++) {
      const [a, b] = [`race-${i}-a`, `race-${i}-b`];
      await actors.operator.workItems.create({ id: a, title: a });
      await actors.operator.workItems.create({ id: b, title: b });
      // Every other round, hold the graph lock until both edits are queued behind it, so they
      // are guaranteed to be in flight at the same moment; the other rounds race freely.
      const gated = i % 2 === 0;
      if (gated) {
        await gate.query("BEGIN");
        await gate.query(GRAPH_LOCK);
      }
      const racing = Promise.allSettled([
        addDependency(database.db, operatorCaller, { workItemId: a, dependsOnId: b }),
        addDependency(second, operatorCaller, { workItemId: b, dependsOnId: a }),
      ]);
      if (gated) {
        // Let them go once both transactions wait for the lock (a failed wait still opens the gate).
        try {
          await expect.poll(() => lockWaiters(sql), { interval: 20 }).toBeGreaterThanOrEqual(2);
        } finally {
          await gate.query("COMMIT");
        }
      }
      const results = await racing;
      const fulfilled = results.filter((result) => result.status === "fulfilled");
      const rejected = results.filter((result) => result.status === "rejected");
      expect(fulfilled, `round ${i}`).toHaveLength(1);
      expect((rejected[0] as PromiseRejectedResult).reason).toMatchObject({ reason: "DEPENDENCY_CYCLE" });
      const { rows } = await gate.query("SELECT work_item_id, depends_on_id FROM dependencies WHERE work_item_id IN ($1, $2)", [a, b]);
      expect(rows, `round ${i}`).toHaveLength(1);
      // The winner's dependent is blocked, the other item is ready.
      const dependent = rows[0]!.work_item_id as string;
      const other = dependent === a ? b : a;
      expect((await actors.operator.workItems.get({ id: dependent })).stage).toBe("blocked");
      expect((await actors.operator.workItems.get({ id: other })).stage).toBe("ready");
    }
  });

  it("a release unblocks the whole subtree at commit, all at once", async ({ database, sql, actors }) => {
    const { operator } = actors;
    const worker = await actors.agent("atomic");
    await operator.workItems.create({ id: "at-x", title: "Blocker", priority: 50 });
    await operator.workItems.create({ id: "at-g", title: "Grandparent", dependsOn: ["at-x"] });
    await operator.workItems.create({ id: "at-p", title: "Parent", parentId: "at-g" });
    await operator.workItems.create({ id: "at-c", title: "Grandchild", parentId: "at-p" });
    await operator.workItems.create({ id: "at-d", title: "Direct dependent", dependsOn: ["at-x"] });
    const lease = (await worker.leases.claim({ workItemId: "at-x", durationSeconds: 600 }))!;
    // Hold the grandchild so the release stops after unblocking the direct dependents, uncommitted.
    const holder = await database.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM work_items WHERE id = 'at-c' FOR UPDATE");
    const releasing = worker.leases.release({ leaseId: lease.lease.id, epoch: 1, evidence: "done" });
    await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(1);
    const stages = async () => Object.fromEntries(
      await Promise.all(["at-x", "at-c", "at-d"].map(async (id) => [id, (await operator.workItems.get({ id })).stage] as const)),
    );
    const ready = async () => (await operator.workItems.queue({ limit: 200 })).map((item) => item.id).filter((id) => id.startsWith("at-"));
    expect(await stages()).toEqual({ "at-x": "leased", "at-c": "blocked", "at-d": "blocked" });
    expect(await ready()).toEqual([]);
    await holder.query("ROLLBACK");
    await releasing;
    expect(await stages()).toEqual({ "at-x": "released", "at-c": "ready", "at-d": "ready" });
    expect(await ready()).toEqual(["at-c", "at-d"]);
  });

  it("a dependency committed while its blocker's release waits for the row is counted off by that release", async ({ database, sql, actors }) => {
    const { operator } = actors;
    const worker = await actors.agent("releaser");
    await operator.workItems.create({ id: "late-0x", title: "Blocker", priority: 50 });
    await operator.workItems.create({ id: "late-a", title: "Dependent" });
    await operator.workItems.create({ id: "late-a.kid", title: "Dependent's child", parentId: "late-a" });
    const lease = (await worker.leases.claim({ workItemId: "late-0x", durationSeconds: 600 }))!;
    // Hold the dependent's child, so the dependency edit stops after writing its edge (while it
    // still holds the blocker's row) until we let it go.
    const holder = await database.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM work_items WHERE id = 'late-a.kid' FOR UPDATE");
    const adding = operator.workItems.addDependency({ workItemId: "late-a", dependsOnId: "late-0x" });
    await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(1);
    const releasing = worker.leases.release({ leaseId: lease.lease.id, epoch: 1, evidence: "done" });
    await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(2);
    await holder.query("ROLLBACK");
    const [added, released] = await Promise.all([adding, releasing]);
    expect(added.dependsOn).toEqual(["late-0x"]);
    expect(released.workItem.status).toBe("released");

    // The blocker is released, so nothing may stay blocked by it.
    expect((await operator.workItems.get({ id: "late-a.kid" })).stage).toBe("ready");
    const kid = (await worker.leases.claim({ workItemId: "late-a.kid" }))!;
    await worker.leases.release({ leaseId: kid.lease.id, epoch: 1, evidence: "done" });
    expect((await operator.workItems.get({ id: "late-a" })).stage).toBe("ready");
  });

  for (const finish of ["release", "operator cancel"] as const) {
    it(`a subtree moved under a dependent while the blocker's ${finish} waits for that dependent is unblocked too`, async ({ database, sql, actors }) => {
      const { operator } = actors;
      const worker = await actors.agent("releaser-2");
      const p = finish === "release" ? "mvr" : "mvc";
      await operator.workItems.create({ id: `${p}-x`, title: "Blocker", priority: 50 });
      await operator.workItems.create({ id: `${p}-a`, title: "Dependent", dependsOn: [`${p}-x`] });
      await operator.workItems.create({ id: `${p}-s`, title: "Subtree root" });
      await operator.workItems.create({ id: `${p}-s.kid`, title: "Subtree child", parentId: `${p}-s` });
      const lease = finish === "release" ? (await worker.leases.claim({ workItemId: `${p}-x`, durationSeconds: 600 }))! : null;
      // Hold the subtree's child: the move stops there, holding the dependent's row (its new parent).
      const holder = await database.connect();
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM work_items WHERE id = '${p}-s.kid' FOR UPDATE`);
      const moving = operator.workItems.move({ id: `${p}-s`, parentId: `${p}-a` });
      await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(1);
      const finishing = lease
        ? worker.leases.release({ leaseId: lease.lease.id, epoch: 1, evidence: "done" })
        : operator.workItems.cancel({ id: `${p}-x`, reason: "not needed" });
      await expect.poll(() => lockWaiters(sql)).toBeGreaterThanOrEqual(2);
      await holder.query("ROLLBACK");
      await Promise.all([moving, finishing]);

      // The blocker is terminal: the moved subtree must not stay blocked by it.
      expect((await operator.workItems.get({ id: `${p}-s.kid` })).stage).toBe("ready");
      expect((await operator.workItems.get({ id: `${p}-s` })).stage).toBe("waiting_on_children");
      expect((await operator.workItems.get({ id: `${p}-a` })).stage).toBe("waiting_on_children");
    });
  }

  it("a claim, renew and release are not delayed by a long graph edit on unrelated items", async ({ database, actors }) => {
    const { operator } = actors;
    const worker = await actors.agent("not-delayed");
    for (const id of ["edit-a", "edit-b", "edit-c", "edit-d"]) await operator.workItems.create({ id, title: id, priority: -100 });
    for (let i = 0; i < 6; i++) await operator.workItems.create({ id: `urgent-${i}`, title: `urgent ${i}`, priority: 100 });
    // Warm the connections and prepared statements, as in a running server.
    const warm = (await worker.leases.claim({ workItemId: "urgent-0", durationSeconds: 60 }))!;
    await worker.leases.renew({ leaseId: warm.lease.id, epoch: 1, durationSeconds: 60 });
    await worker.leases.release({ leaseId: warm.lease.id, epoch: 1, evidence: "warm-up" });

    // A graph edit in progress: it holds the graph-shape lock and row locks on the items it edits.
    const editor = await database.connect();
    await editor.query("BEGIN");
    await editor.query(GRAPH_LOCK);
    await editor.query("INSERT INTO dependencies (work_item_id, depends_on_id) VALUES ('edit-a', 'edit-b')");
    await editor.query("UPDATE work_items SET open_dependency_count = open_dependency_count + 1 WHERE id = 'edit-a'");
    // Another graph edit queues behind it (edits are serialized)…
    let queuedEditDone = false;
    const queuedEdit = operator.workItems.addDependency({ workItemId: "edit-c", dependsOnId: "edit-d" }).finally(() => {
      queuedEditDone = true;
    });
    try {
      // …but claims never take that lock: they all finish while the edit still holds it (had any
      // of them waited for it, it would never finish), and the queued edit is still waiting.
      for (let i = 0; i < 5; i++) {
        const claimed = await worker.leases.claim({ durationSeconds: 60 });
        expect(claimed?.workItem.id).toBe(`urgent-${i + 1}`);
        await worker.leases.renew({ leaseId: claimed!.lease.id, epoch: claimed!.lease.epoch, durationSeconds: 120 });
        await worker.leases.release({ leaseId: claimed!.lease.id, epoch: claimed!.lease.epoch, evidence: "done while the graph was being edited" });
      }
      expect(queuedEditDone).toBe(false);
    } finally {
      await editor.query("ROLLBACK");
    }
    // Once the long edit ends, the queued one goes through.
    expect((await queuedEdit).dependsOn).toEqual(["edit-d"]);
    expect((await operator.workItems.get({ id: "edit-a" })).stage).toBe("ready");
  });
});
