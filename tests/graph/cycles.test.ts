import { describe, expect } from "vitest";
import type pg from "pg";
import { itemRows, refused, tableCounts, graphTest, type Actors } from "./support";

const it = graphTest({ poolSize: 5, scope: "file", continuity: true });

/** `edit` must be refused with DEPENDENCY_CYCLE and leave every row as it was. */
async function expectCycle(client: pg.Client, edit: () => Promise<unknown>) {
  const before = { counts: await tableCounts(client), items: await itemRows(client) };
  const refusal = await refused(edit());
  expect(refusal).toMatchObject({ reason: "DEPENDENCY_CYCLE", code: "CONFLICT" });
  expect({ counts: await tableCounts(client), items: await itemRows(client) }).toEqual(before);
}

/** Creates a chain root → … → leaf of parent/child items `${prefix}0`, `${prefix}1`, … */
async function chain(actors: Actors, prefix: string, depth: number) {
  for (let i = 0; i < depth; i++) {
    await actors.operator.workItems.create({ id: `${prefix}${i}`, title: `${prefix} level ${i}`, parentId: i === 0 ? null : `${prefix}${i - 1}` });
  }
}

describe("DEPENDENCY_CYCLE", () => {
  it("self-dependency: addDependency, create and move", async ({ actors, sql: client }) => {
    const { operator } = actors;
    await operator.workItems.create({ id: "self", title: "Self" });
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "self", dependsOnId: "self" }));
    await expectCycle(client, () => operator.workItems.create({ id: "self2", title: "Self 2", dependsOn: ["self2"] }));
    await expectCycle(client, () => operator.workItems.move({ id: "self", parentId: "self" }));
  });

  it("a child (or grandchild) depending on its ancestor", async ({ actors, sql: client }) => {
    const { operator } = actors;
    await chain(actors, "anc", 3);
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "anc1", dependsOnId: "anc0" }));
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "anc2", dependsOnId: "anc0" }));
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "anc2", dependsOnId: "anc1" }));
    // New children are checked the same way.
    await expectCycle(client, () => operator.workItems.create({ id: "anc3", title: "New leaf", parentId: "anc2", dependsOn: ["anc0"] }));
    await expectCycle(client, () => operator.workItems.create({ id: "anc3", title: "New leaf", parentId: "anc2", dependsOn: ["anc2"] }));
  });

  it("a parent (or grandparent) depending on its descendant", async ({ actors, sql: client }) => {
    const { operator } = actors;
    await chain(actors, "desc", 3);
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "desc0", dependsOnId: "desc1" }));
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "desc0", dependsOnId: "desc2" }));
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "desc1", dependsOnId: "desc2" }));
  });

  it("reparenting under its own descendant (or itself)", async ({ actors, sql: client }) => {
    const { operator } = actors;
    await chain(actors, "re", 3);
    await expectCycle(client, () => operator.workItems.move({ id: "re0", parentId: "re1" }));
    await expectCycle(client, () => operator.workItems.move({ id: "re0", parentId: "re2" }));
    await expectCycle(client, () => operator.workItems.move({ id: "re1", parentId: "re2" }));
    await expectCycle(client, () => operator.workItems.move({ id: "re1", parentId: "re1" }));
    // Moving within the tree the other way is fine.
    expect((await operator.workItems.move({ id: "re2", parentId: "re0" })).parentId).toBe("re0");
  });

  it("a longer chain a→b→c→a, also closed by create", async ({ actors, sql: client }) => {
    const { operator } = actors;
    await operator.workItems.create({ id: "ca", title: "A" });
    await operator.workItems.create({ id: "cb", title: "B" });
    await operator.workItems.create({ id: "cc", title: "C" });
    await operator.workItems.create({ id: "cd", title: "D" });
    await operator.workItems.addDependency({ workItemId: "ca", dependsOnId: "cb" });
    await operator.workItems.addDependency({ workItemId: "cb", dependsOnId: "cc" });
    await operator.workItems.addDependency({ workItemId: "cc", dependsOnId: "cd" });
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "cc", dependsOnId: "ca" }));
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "cd", dependsOnId: "ca" }));
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "cd", dependsOnId: "cb" }));
    // A diamond is not a cycle.
    expect((await operator.workItems.addDependency({ workItemId: "ca", dependsOnId: "cd" })).dependsOn).toEqual(["cb", "cd"]);
    // Terminal items still count in the waits-for graph: releasing one does not open a way round.
    await operator.workItems.cancel({ id: "cd", reason: "gone" });
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "cc", dependsOnId: "ca" }));
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "cb", dependsOnId: "ca" }));
    // Closed by creating an item: a new item cannot close a cycle unless it has a parent, so give it one.
    await operator.workItems.create({ id: "ce", title: "E", dependsOn: ["ca"] });
    await expectCycle(client, () => operator.workItems.create({ id: "cf", title: "F", parentId: "cc", dependsOn: ["ce"] }));
  });

  it("cycles through inherited dependencies", async ({ actors, sql: client }) => {
    const { operator } = actors;
    // g depends on x, so every descendant of g waits for x; x depending on any of them closes a cycle.
    await operator.workItems.create({ id: "ix", title: "X" });
    await operator.workItems.create({ id: "ig", title: "G", dependsOn: ["ix"] });
    await operator.workItems.create({ id: "ip", title: "P", parentId: "ig" });
    await operator.workItems.create({ id: "ic", title: "C", parentId: "ip" });
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "ix", dependsOnId: "ic" }));
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "ix", dependsOnId: "ip" }));
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "ix", dependsOnId: "ig" }));
    // y depends on x; a new child of g depending on y waits for x through y: fine. But x depending on y's dependent…
    await operator.workItems.create({ id: "iy", title: "Y" });
    await operator.workItems.addDependency({ workItemId: "iy", dependsOnId: "ic" });
    await expectCycle(client, () => operator.workItems.addDependency({ workItemId: "ix", dependsOnId: "iy" }));
    // A new child of c that depends on y, which waits for c: c → new child → y → c.
    await expectCycle(client, () => operator.workItems.create({ id: "iz", title: "Z", parentId: "ic", dependsOn: ["iy"] }));
    // Not a cycle: under p (p waits for the new child, which waits for y → c → x; nothing there waits for p).
    expect((await operator.workItems.create({ id: "iz", title: "Z", parentId: "ip", dependsOn: ["iy"] })).stage).toBe("blocked");
  });

  it("moves that close a cycle through inherited dependencies", async ({ actors, sql: client }) => {
    const { operator } = actors;
    // p depends on d, a child of i: putting i under p makes d wait (through p) for itself.
    await operator.workItems.create({ id: "mi", title: "I" });
    await operator.workItems.create({ id: "md", title: "D", parentId: "mi" });
    await operator.workItems.create({ id: "mp", title: "P", dependsOn: ["md"] });
    await expectCycle(client, () => operator.workItems.move({ id: "mi", parentId: "mp" }));
    // The same with the dependency on a grandparent of the new parent.
    await operator.workItems.create({ id: "mg", title: "G", dependsOn: ["md"] });
    await operator.workItems.create({ id: "mq", title: "Q", parentId: "mg" });
    await expectCycle(client, () => operator.workItems.move({ id: "mi", parentId: "mq" }));
    // A blocker of the new parent that waits for the moved item itself.
    await operator.workItems.create({ id: "mj", title: "J" });
    await operator.workItems.create({ id: "mk", title: "K", dependsOn: ["mj"] });
    await operator.workItems.create({ id: "mr", title: "R", dependsOn: ["mk"] });
    await expectCycle(client, () => operator.workItems.move({ id: "mj", parentId: "mr" }));
    // Moving an item under a parent that waits for it through a dependency chain.
    await operator.workItems.create({ id: "ms", title: "S" });
    await operator.workItems.create({ id: "mt", title: "T", dependsOn: ["ms"] });
    await expectCycle(client, () => operator.workItems.move({ id: "mt", parentId: "ms" }));
    // The other way round too: t (depending on s) would be an ancestor of s and so s would wait for itself.
    await expectCycle(client, () => operator.workItems.move({ id: "ms", parentId: "mt" }));
    // …and a move that closes no cycle still works.
    await operator.workItems.create({ id: "mu", title: "U" });
    expect((await operator.workItems.move({ id: "ms", parentId: "mu" })).parentId).toBe("mu");
    expect((await operator.workItems.move({ id: "mi", parentId: "mu" })).parentId).toBe("mu");
  });

  it("create and decompose with dependsOn closing a cycle roll back entirely", async ({ actors, sql: client }) => {
    const { operator } = actors;
    const w1 = await actors.agent("cyc-worker");
    await operator.workItems.create({ id: "dp", title: "Parent to decompose", priority: 1000 });
    await operator.workItems.create({ id: "dx", title: "Waits for the parent", dependsOn: ["dp"] });
    const claimed = (await w1.leases.claim({ workItemId: "dp" }))!;
    const lease = { leaseId: claimed.lease.id, epoch: claimed.lease.epoch };
    // Siblings depending on each other.
    await expectCycle(client, () => w1.leases.decompose({ ...lease, children: [
      { id: "dp-a", title: "A", dependsOn: ["dp-b"] },
      { id: "dp-b", title: "B", dependsOn: ["dp-a"] },
    ] }));
    // A child depending on its parent, directly or through another item.
    await expectCycle(client, () => w1.leases.decompose({ ...lease, children: [{ id: "dp-a", title: "A", dependsOn: ["dp"] }] }));
    await expectCycle(client, () => w1.leases.decompose({ ...lease, children: [{ id: "dp-a", title: "A" }, { id: "dp-b", title: "B", dependsOn: ["dx"] }] }));
    // A child depending on itself.
    await expectCycle(client, () => w1.leases.decompose({ ...lease, children: [{ id: "dp-a", title: "A", dependsOn: ["dp-a"] }] }));
    // Create under the parent depending on something that waits for the parent.
    await expectCycle(client, () => operator.workItems.create({ id: "dp-c", title: "C", parentId: "dp", dependsOn: ["dx"] }));
    // The parent's lease is untouched by all of that.
    expect((await operator.workItems.get({ id: "dp" })).currentLease).toMatchObject({ id: lease.leaseId, endedAt: null });
  });
});
