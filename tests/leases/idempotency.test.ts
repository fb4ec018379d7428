import { describe, expect } from "vitest";
import { callerAs } from "../support/app";
import { refusal, databaseTest } from "../support/fixtures";
import { databaseSnapshot } from "./support";

const it = databaseTest();

describe("idempotency keys", () => {
  it("a replayed claim returns the same lease, takes no second item and writes nothing, even when replays race", async ({ database, sql, people }) => {
    const { operator, agent } = people;
    const a = await agent("retrier");
    await operator.workItems.create({ id: "idem-1", title: "One", priority: 2 });
    await operator.workItems.create({ id: "idem-2", title: "Two", priority: 1 });
    await operator.workItems.create({ id: "idem-3", title: "Three", priority: 0 });
    const first = (await a.leases.claim({ durationSeconds: 60, idempotencyKey: "claim-attempt-1" }))!;
    expect(first.workItem.id).toBe("idem-1");

    const before = await databaseSnapshot(sql);
    const replays = await Promise.all(
      Array.from({ length: 5 }, () => a.leases.claim({ durationSeconds: 60, idempotencyKey: "claim-attempt-1" })),
    );
    for (const replay of replays) expect(replay).toEqual(first);
    // The same worker's other token shares the key space (a retry may come from a fresh session).
    const sameWorker = await callerAs(database.instance, "agent", "retrier");
    expect(await sameWorker.api.leases.claim({ durationSeconds: 60, key: "claim-attempt-1" })).toEqual(first);
    expect(await databaseSnapshot(sql)).toEqual(before);
    expect((await operator.workItems.get({ id: "idem-2" })).stage).toBe("ready");

    // Concurrent first attempts with one key: one claim happens, every caller sees it.
    const raced = await Promise.all(
      Array.from({ length: 8 }, () => a.leases.claim({ durationSeconds: 60, idempotencyKey: "claim-attempt-2" })),
    );
    expect(new Set(raced.map((result) => result!.lease.id)).size).toBe(1);
    expect(raced[0]!.workItem.id).toBe("idem-2");
    expect((await operator.leases.history({ workItemId: "idem-2" }))).toHaveLength(1);
    expect((await operator.workItems.get({ id: "idem-3" })).stage).toBe("ready");

    // After the lease ended, the replay still returns the original result and claims nothing.
    await a.leases.release({ leaseId: first.lease.id, epoch: 1, evidence: "done" });
    const afterRelease = await databaseSnapshot(sql);
    expect(await a.leases.claim({ durationSeconds: 60, idempotencyKey: "claim-attempt-1" })).toEqual(first);
    expect(await databaseSnapshot(sql)).toEqual(afterRelease);

    // Another worker's identical key is its own.
    const b = await agent("other-retrier");
    expect((await b.leases.claim({ durationSeconds: 60, idempotencyKey: "claim-attempt-1" }))!.workItem.id).toBe("idem-3");
  });

  it("the same key with another input or another operation is IDEMPOTENCY_KEY_REUSED and changes nothing", async ({ sql, people }) => {
    const { operator, agent } = people;
    const a = await agent("reuser");
    await operator.workItems.create({ id: "reuse-1", title: "Reuse", priority: -5 });
    await operator.workItems.create({ id: "reuse-2", title: "Reuse too", priority: -5 });
    const claimed = (await a.leases.claim({ workItemId: "reuse-1", durationSeconds: 60, idempotencyKey: "k-claim" }))!;
    const note = await a.leases.note({ leaseId: claimed.lease.id, epoch: 1, content: "n", idempotencyKey: "k-note" });
    const { id: leaseId } = claimed.lease;

    const before = await databaseSnapshot(sql);
    const misuses = {
      "claim, other duration": () => a.leases.claim({ workItemId: "reuse-1", durationSeconds: 61, idempotencyKey: "k-claim" }),
      "claim, other item": () => a.leases.claim({ workItemId: "reuse-2", durationSeconds: 60, idempotencyKey: "k-claim" }),
      "claim, next instead of named": () => a.leases.claim({ durationSeconds: 60, idempotencyKey: "k-claim" }),
      "note with the claim's key": () => a.leases.note({ leaseId, epoch: 1, content: "x", idempotencyKey: "k-claim" }),
      "note, other content": () => a.leases.note({ leaseId, epoch: 1, content: "other", idempotencyKey: "k-note" }),
      "claim with the note's key": () => a.leases.claim({ durationSeconds: 60, idempotencyKey: "k-note" }),
      "decompose with the note's key": () => a.leases.decompose({ leaseId, epoch: 1, children: [{ title: "c" }], idempotencyKey: "k-note" }),
      "attention with the claim's key": () => a.attention.request({ leaseId, epoch: 1, kind: "help", question: "?", key: "k-claim" }),
    };
    for (const [name, misuse] of Object.entries(misuses)) {
      expect({ name, reason: (await refusal(misuse())).reason }).toEqual({ name, reason: "IDEMPOTENCY_KEY_REUSED" });
    }
    expect(await databaseSnapshot(sql)).toEqual(before);
    // The originals still replay.
    expect(await a.leases.note({ leaseId, epoch: 1, content: "n", idempotencyKey: "k-note" })).toEqual(note);
  });

  it("a replayed note is written once, also when the replays race and after the lease ended", async ({ sql, people }) => {
    const { operator, agent } = people;
    const a = await agent("noter");
    await operator.workItems.create({ id: "idem-note", title: "Notes", priority: -10 });
    const { lease } = (await a.leases.claim({ workItemId: "idem-note", durationSeconds: 60 }))!;
    const notes = await Promise.all(
      Array.from({ length: 6 }, () => a.leases.note({ leaseId: lease.id, epoch: 1, content: "progress", idempotencyKey: "note-1" })),
    );
    expect(new Set(notes.map((note) => note.id)).size).toBe(1);
    expect((await a.notes.list({ workItemId: "idem-note" })).items).toEqual([notes[0]]);
    const { rows } = await sql.query("SELECT count(*)::int AS n FROM events WHERE work_item_id = 'idem-note' AND type = 'note.added'");
    expect(rows[0].n).toBe(1);

    // After the lease ended, a replay still returns the original note and writes nothing.
    await a.leases.release({ leaseId: lease.id, epoch: 1, evidence: "done" });
    const before = await databaseSnapshot(sql);
    const replay = await a.leases.note({ leaseId: lease.id, epoch: 1, content: "progress", idempotencyKey: "note-1" });
    expect(replay).toEqual(notes[0]);
    expect(await databaseSnapshot(sql)).toEqual(before);
  });

  it("a refused call leaves its key unused: a later valid call with that key goes through", async ({ people }) => {
    const { operator, agent } = people;
    const a = await agent("patient");
    await operator.workItems.create({ id: "later", title: "Later", priority: -20 });
    await operator.workItems.create({ id: "blocker", title: "Blocker", priority: -20 });
    await operator.workItems.addDependency({ workItemId: "later", dependsOnId: "blocker" });
    expect(await refusal(a.leases.claim({ workItemId: "later", durationSeconds: 60, key: "try-later" }))).toMatchObject({
      reason: "NOT_CLAIMABLE",
      detail: { stage: "blocked" },
    });
    await operator.workItems.removeDependency({ workItemId: "later", dependsOnId: "blocker" });
    const claimed = await a.leases.claim({ workItemId: "later", durationSeconds: 60, key: "try-later" });
    expect(claimed!.lease.epoch).toBe(1);
  });
});
