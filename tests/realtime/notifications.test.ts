import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENTS_CHANNEL, RELAYED } from "../../server/sql/notifications";
import { callerAs } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";

/*
 * Which commits PostgreSQL announces (docs/waiting.md): every commit that may make work
 * claimable or answer a question, and none of the frequent ones that cannot — claims,
 * renewals, notes and releases that readied nothing. A notifying commit is serialized with
 * every other one, so the quiet ones keep most of an agent fleet's commits off that lock.
 * Another instance's waiting claims rely on the announced ones (tests/realtime/waiting.test.ts);
 * the quiet ones reach other instances' event streams through one relayed notification
 * (server/realtime/relay.ts), which wakes no claim.
 */

let database: TestDatabase;
let listener: pg.Client;
let sender: pg.Client;
const heard: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase({ poolSize: 4 });
  listener = await database.connect();
  sender = await database.connect();
  listener.on("notification", (message) => heard.push(message.payload ?? ""));
  await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
});
afterAll(() => database.close());

/** Notifications arrive in commit order: once a marker sent now has arrived, so has everything committed before. */
async function heardEverythingCommitted(): Promise<void> {
  const marker = `marker-${Math.random()}`;
  await sender.query(`SELECT pg_notify($1, $2)`, [EVENTS_CHANNEL, marker]);
  await expect.poll(() => heard, { message: "the marker notification", interval: 5 }).toContain(marker);
}

/** What the commits of `action` announced (and the relay after them), and nothing committed before it. */
async function announcedBy(action: () => Promise<unknown>): Promise<string[]> {
  await database.instance.relay.settled();
  await heardEverythingCommitted();
  heard.length = 0;
  await action();
  await database.instance.relay.settled();
  await heardEverythingCommitted();
  return [...new Set(heard.filter((payload) => !payload.startsWith("marker-")))].sort();
}

describe("the commits PostgreSQL announces", () => {
  it("claims, renewals and notes are quiet: only relayed, after they commit", async () => {
    const { api: operator } = await callerAs(database.instance, "operator");
    const { api: agent } = await callerAs(database.instance, "agent", "quiet-worker");
    await operator.workItems.create({ id: "leaf", title: "Leaf" });

    let lease: { id: string; epoch: number } | undefined;
    expect(await announcedBy(async () => (lease = (await agent.leases.claim({ workItemId: "leaf", durationSeconds: 60 }))!.lease))).toEqual([RELAYED]);
    expect(await announcedBy(() => agent.leases.claim({ durationSeconds: 60 }))).toEqual([]); // finds nothing, commits nothing
    expect(await announcedBy(() => agent.leases.renew({ leaseId: lease!.id, epoch: lease!.epoch, durationSeconds: 120 }))).toEqual([RELAYED]);
    expect(await announcedBy(() => agent.leases.note({ leaseId: lease!.id, epoch: lease!.epoch, content: "halfway" }))).toEqual([RELAYED]);
  });

  it("a release that readies nothing is quiet; one that readies a parent, or frees a slot under a limit, is announced", async () => {
    const { api: operator } = await callerAs(database.instance, "operator");
    const { api: agent } = await callerAs(database.instance, "agent", "releasing-worker");
    const claimAndRelease = async (workItemId: string) => {
      const lease = (await agent.leases.claim({ workItemId, durationSeconds: 60 }))!.lease;
      return announcedBy(() => agent.leases.release({ leaseId: lease.id, epoch: lease.epoch, evidence: "done" }));
    };
    await operator.workItems.create({ id: "alone", title: "Nothing depends on it" });
    expect(await claimAndRelease("alone")).toEqual([RELAYED]);

    await operator.workItems.create({ id: "plan", title: "Parent" });
    await operator.workItems.create({ id: "step-1", title: "Step 1", parentId: "plan" });
    await operator.workItems.create({ id: "step-2", title: "Step 2", parentId: "plan" });
    expect(await claimAndRelease("step-1")).toEqual([RELAYED]); // the parent still waits for step-2
    expect(await claimAndRelease("step-2")).toEqual(["lease.ended", "work_item.status_changed"]); // the parent is ready

    await operator.limits.set({ key: "deploys", maxLeases: 1 });
    await operator.workItems.create({ id: "deploy", title: "Deploy", concurrencyKey: "deploys" });
    expect(await claimAndRelease("deploy")).toEqual(["lease.ended", "work_item.status_changed"]);
  });

  it("what may make work claimable is announced: a new item, a release, a cancelled blocker, a revoked lease", async () => {
    const { api: operator } = await callerAs(database.instance, "operator");
    const { api: agent } = await callerAs(database.instance, "agent", "loud-worker");
    expect(await announcedBy(() => operator.workItems.create({ id: "blocker", title: "Blocker" }))).toEqual(["work_item.created"]);
    await operator.workItems.create({ id: "dependent", title: "Dependent", dependsOn: ["blocker"] });
    const blocker = (await agent.leases.claim({ workItemId: "blocker", durationSeconds: 60 }))!.lease;
    expect(await announcedBy(() => agent.leases.release({ leaseId: blocker.id, epoch: blocker.epoch, evidence: "done" }))).toEqual(["lease.ended", "work_item.status_changed"]);

    await operator.workItems.create({ id: "blocker-2", title: "Blocker" });
    await operator.workItems.create({ id: "dependent-2", title: "Dependent", dependsOn: ["blocker-2"] });
    expect(await announcedBy(() => operator.workItems.cancel({ id: "blocker-2", reason: "dropped" }))).toEqual(["work_item.status_changed"]);

    const revoked = (await agent.leases.claim({ workItemId: "dependent-2", durationSeconds: 60 }))!.lease;
    expect(await announcedBy(() => operator.leases.revoke({ leaseId: revoked.id, epoch: revoked.epoch, reason: "reassigning" }))).toEqual(["lease.ended"]);
  });
});
