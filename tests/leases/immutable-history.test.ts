import { describe, expect } from "vitest";
import type { Lease } from "@work-graph/contract";
import { sweepExpiredLeases } from "../../server/operations/sweep";
import type pg from "pg";
import type { TestDatabase } from "../support/database";
import { refusal, advanceClockPast, databaseTest, type Actors } from "../support/fixtures";
import { databaseSnapshot } from "./support";

/*
 * Rule 4 through the API: once a lease has ended, no call presenting it changes anything —
 * not the lease row, not the item, not notes, attention requests, events or receipts.
 */

const it = databaseTest();

type Api = Awaited<ReturnType<Actors["agent"]>>;
type Context = { database: TestDatabase; sql: pg.Client; people: Actors };

/** Ends `lease` (held by `api`) in one of the ways a lease can end. */
const enders: Record<string, (api: Api, lease: Lease, context: Context) => Promise<unknown>> = {
  released: (api, lease) => api.leases.release({ leaseId: lease.id, epoch: lease.epoch, evidence: "done" }),
  cancelled: (api, lease) => api.leases.cancel({ leaseId: lease.id, epoch: lease.epoch, reason: "not needed" }),
  decomposed: (api, lease) =>
    api.leases.decompose({ leaseId: lease.id, epoch: lease.epoch, children: [{ title: "part one" }, { title: "part two" }] }),
  attention_requested: (api, lease) =>
    api.attention.request({ leaseId: lease.id, epoch: lease.epoch, kind: "decision", question: "which way?", options: ["a", "b"] }),
  expired: async (_api, lease, { database, sql }) => {
    await advanceClockPast(sql, lease.expiresAt);
    await sweepExpiredLeases(database.db);
  },
  "expired and reclaimed": async (_api, lease, { sql, people }) => {
    await advanceClockPast(sql, lease.expiresAt);
    await (await people.agent("reclaimer")).leases.claim({ workItemId: lease.workItemId, durationSeconds: 600 });
  },
};

const expectedKind: Record<string, string> = {
  released: "ended", cancelled: "ended", decomposed: "ended", attention_requested: "ended",
  expired: "expired", "expired and reclaimed": "superseded",
};

describe("an ended lease is history: no API path changes anything", () => {
  it.for(Object.keys(enders))("after the lease ended by %s", async (how, { database, sql, people: world }) => {
    const slug = how.replace(/[^a-z]+/g, "-");
    const workerId = `historian-${slug}`;
    const api = await world.agent(workerId);
    const id = `history-${slug}`;
    await world.operator.workItems.create({ id, title: `Ends by ${how}` });
    const { lease } = (await api.leases.claim({ workItemId: id, durationSeconds: how.startsWith("expired") ? 1 : 600 }))!;
    await api.leases.note({ leaseId: lease.id, epoch: 1, content: "before the end" });
    await enders[how]!(api, lease, { database, sql, people: world });

    const ended = await world.operator.leases.get({ leaseId: lease.id });
    expect(ended.outcome).toBe(how.startsWith("expired") ? "expired" : how);
    expect(ended.endedAt).not.toBeNull();

    const ref = { leaseId: lease.id, epoch: 1 };
    const attempts = {
      renew: () => api.leases.renew({ ...ref, durationSeconds: 600 }),
      release: () => api.leases.release({ ...ref, evidence: "again", links: ["https://example.com/pr/1"] }),
      cancel: () => api.leases.cancel({ ...ref, reason: "again" }),
      note: () => api.leases.note({ ...ref, content: "after the end" }),
      "note with a key": () => api.leases.note({ ...ref, content: "after the end", idempotencyKey: `late-note-${slug}` }),
      decompose: () => api.leases.decompose({ ...ref, children: [{ id: `${id}-late-child`, title: "late child" }] }),
      "decompose claiming a child": () =>
        api.leases.decompose({ ...ref, children: [{ id: `${id}-late-claimed`, title: "late" }], claimChildId: `${id}-late-claimed` }),
      "blocking attention": () => api.attention.request({ ...ref, kind: "help", question: "late?" }),
      "non-blocking attention": () => api.attention.request({ ...ref, kind: "review", question: "late?", blocking: false }),
      "admin renew for the worker": () => world.admin.leases.renew({ ...ref, workerId, durationSeconds: 600 }),
      "admin release for the worker": () => world.admin.leases.release({ ...ref, workerId, evidence: "admin again" }),
    };
    const before = await databaseSnapshot(sql);
    for (const [name, attempt] of Object.entries(attempts)) {
      const { reason, detail } = await refusal(attempt());
      expect({ name, reason, kind: detail.kind }).toEqual({ name, reason: "LEASE_NOT_CURRENT", kind: expectedKind[how] });
    }
    expect(await databaseSnapshot(sql)).toEqual(before);
    expect(await world.operator.leases.get({ leaseId: lease.id })).toEqual(ended);
  });
});
