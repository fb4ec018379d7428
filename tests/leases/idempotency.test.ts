import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actors, refusal } from "../support/fixtures";
import { createTestDatabase, type TestDatabase } from "../support/database";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

describe("idempotency keys", () => {
  it("a replayed claim returns the same lease and takes no second item, even when replays race", async () => {
    const { operator, agent } = await actors(database);
    const a = await agent("retrier");
    await operator.workItems.create({ id: "idem-1", title: "One" });
    await operator.workItems.create({ id: "idem-2", title: "Two" });
    const first = await a.leases.claim({ durationSeconds: 60, idempotencyKey: "claim-attempt-1" });
    const replays = await Promise.all(
      Array.from({ length: 5 }, () => a.leases.claim({ durationSeconds: 60, idempotencyKey: "claim-attempt-1" })),
    );
    for (const replay of replays) expect(replay!.lease.id).toBe(first!.lease.id);
    expect((await operator.workItems.get({ id: "idem-2" })).stage).toBe("ready");

    const raced = await Promise.all(
      Array.from({ length: 8 }, () => a.leases.claim({ durationSeconds: 60, idempotencyKey: "claim-attempt-2" })),
    );
    expect(new Set(raced.map((result) => result!.lease.id)).size).toBe(1);
    expect(raced[0]!.workItem.id).toBe("idem-2");

    expect(await refusal(a.leases.claim({ durationSeconds: 61, idempotencyKey: "claim-attempt-1" }))).toMatchObject({
      reason: "IDEMPOTENCY_KEY_REUSED",
    });
    const { leaseId, epoch } = { leaseId: first!.lease.id, epoch: first!.lease.epoch };
    expect(await refusal(a.leases.note({ leaseId, epoch, content: "x", idempotencyKey: "claim-attempt-1" }))).toMatchObject({
      reason: "IDEMPOTENCY_KEY_REUSED",
    });
  });

  it("a replayed note is written once", async () => {
    const { operator, agent } = await actors(database);
    const a = await agent("noter");
    await operator.workItems.create({ id: "idem-note", title: "Notes" });
    const { lease } = (await a.leases.claim({ workItemId: "idem-note", durationSeconds: 60 }))!;
    const notes = await Promise.all(
      Array.from({ length: 4 }, () => a.leases.note({ leaseId: lease.id, epoch: 1, content: "progress", idempotencyKey: "note-1" })),
    );
    expect(new Set(notes.map((note) => note.id)).size).toBe(1);
    expect((await a.notes.list({ workItemId: "idem-note" })).items).toHaveLength(1);
    expect(await refusal(a.leases.note({ leaseId: lease.id, epoch: 1, content: "other", idempotencyKey: "note-1" }))).toMatchObject({
      reason: "IDEMPOTENCY_KEY_REUSED",
    });
    // After the lease ended, a replay still returns the original note and writes nothing.
    await a.leases.release({ leaseId: lease.id, epoch: 1, evidence: "done" });
    const replay = await a.leases.note({ leaseId: lease.id, epoch: 1, content: "progress", idempotencyKey: "note-1" });
    expect(replay.id).toBe(notes[0]!.id);
  });
});
