import type pg from "pg";
import { describe, expect } from "vitest";
import { sweepExpiredLeases } from "../../server/operations/sweep";
import { databaseTest, refusal, advanceClockPast } from "../support/fixtures";

/*
 * Rule 16: leases.handBack ends the live lease as `returned` (fenced like a release), logs the
 * reason, optionally gates the item, gives the returner no continuity preference, and is not an
 * expiry for rule 11.
 */

const it = databaseTest();

const dbNow = async (sql: pg.Client) => (await sql.query<{ now: Date }>("SELECT work_graph_clock() AS now")).rows[0]!.now.getTime();

const helpRequests = async (sql: pg.Client, item: string) =>
  (await sql.query("SELECT id FROM attention_requests WHERE work_item_id = $1 AND worker_id = 'work-graph'", [item])).rows;

describe("leases.handBack (rule 16)", () => {
  it("ends the lease as returned with the reason in lease.ended; the item is ready again, with no preference for the returner", async ({ people, sql }) => {
    const worker = await people.agent("returner");
    const other = await people.agent("taker");
    await people.operator.workItems.create({ id: "hb-plain", title: "Handed back", priority: 50 });
    const { lease } = (await worker.leases.claim({ workItemId: "hb-plain" }))!;
    // A continuity hold the returner had would otherwise put it first for them.
    await sql.query("UPDATE work_items SET continuity_worker_id = 'returner', continuity_since = work_graph_clock() WHERE id = 'hb-plain'");

    const returned = await worker.leases.handBack({ leaseId: lease.id, epoch: lease.epoch, reason: "needs a browser I do not have" });
    expect(returned.lease).toMatchObject({ id: lease.id, outcome: "returned" });
    expect(returned.lease.endedAt).not.toBeNull();
    expect(returned.workItem).toMatchObject({ id: "hb-plain", stage: "ready", status: "open", notBefore: null });
    const ended = (await people.operator.events.list({ workItemId: "hb-plain" })).items.filter((event) => event.type === "lease.ended");
    expect(ended.at(-1)).toMatchObject({
      actor: "returner", leaseId: lease.id, data: { outcome: "returned", reason: "needs a browser I do not have", retryAfterSeconds: null },
    });
    const { rows } = await sql.query("SELECT continuity_worker_id FROM work_items WHERE id = 'hb-plain'");
    expect(rows[0].continuity_worker_id).toBeNull();
    expect((await other.leases.claim({}))?.workItem.id).toBe("hb-plain");
  });

  it("retryAfterSeconds gates the item until database now + that many seconds: scheduled, passed over by next claims", async ({ people, sql }) => {
    const worker = await people.agent("retry-later");
    await people.operator.workItems.create({ id: "hb-gated", title: "Rate limited", priority: 40 });
    const { lease } = (await worker.leases.claim({ workItemId: "hb-gated" }))!;
    const before = await dbNow(sql);
    const returned = await worker.leases.handBack({ leaseId: lease.id, epoch: lease.epoch, reason: "rate limited", retryAfterSeconds: 120 });
    const after = await dbNow(sql);
    expect(returned.workItem.stage).toBe("scheduled");
    const notBefore = Date.parse(returned.workItem.notBefore!);
    expect(notBefore).toBeGreaterThanOrEqual(before + 120_000);
    expect(notBefore).toBeLessThanOrEqual(after + 120_000);
    expect(notBefore - Date.parse(returned.lease.endedAt!)).toBe(120_000);
    const ended = (await people.operator.events.list({ workItemId: "hb-gated" })).items.filter((event) => event.type === "lease.ended");
    expect(ended.at(-1)?.data).toMatchObject({ outcome: "returned", reason: "rate limited", retryAfterSeconds: 120 });
    const next = await worker.leases.claim({});
    expect(next?.workItem.id).not.toBe("hb-gated");
    if (next) await worker.leases.release({ leaseId: next.lease.id, epoch: next.lease.epoch, evidence: "done" });
  });

  it("is fenced like a release: a stale epoch or an ended lease is LEASE_NOT_CURRENT, someone else's lease FORBIDDEN; nothing changes", async ({ people, sql }) => {
    const worker = await people.agent("fenced-holder");
    const intruder = await people.agent("fenced-intruder");
    await people.operator.workItems.create({ id: "hb-fenced", title: "Fenced" });
    const { lease } = (await worker.leases.claim({ workItemId: "hb-fenced" }))!;
    expect((await refusal(worker.leases.handBack({ leaseId: lease.id, epoch: lease.epoch + 1, reason: "x" }))).reason).toBe("LEASE_NOT_CURRENT");
    expect((await refusal(intruder.leases.handBack({ leaseId: lease.id, epoch: lease.epoch, reason: "x" }))).reason).toBe("FORBIDDEN");
    expect((await sql.query("SELECT ended_at FROM leases WHERE id = $1", [lease.id])).rows[0].ended_at).toBeNull();
    await worker.leases.handBack({ leaseId: lease.id, epoch: lease.epoch, reason: "first" });
    expect(await refusal(worker.leases.handBack({ leaseId: lease.id, epoch: lease.epoch, reason: "again" }))).toMatchObject({
      reason: "LEASE_NOT_CURRENT",
    });
  });

  it("validates its input: a blank reason or retryAfterSeconds outside 0–86400 is refused (BAD_REQUEST) and the lease stays", async ({ people, sql }) => {
    const worker = await people.agent("validator");
    await people.operator.workItems.create({ id: "hb-valid", title: "Valid" });
    const { lease } = (await worker.leases.claim({ workItemId: "hb-valid" }))!;
    for (const bad of [{ reason: "   " }, { reason: "x", retryAfterSeconds: 86_401 }, { reason: "x", retryAfterSeconds: -1 }, { reason: "x", retryAfterSeconds: 1.5 }]) {
      await expect(worker.leases.handBack({ leaseId: lease.id, epoch: lease.epoch, ...bad })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    }
    expect((await sql.query("SELECT ended_at FROM leases WHERE id = $1", [lease.id])).rows[0].ended_at).toBeNull();
  });

  it("a returned lease neither counts toward nor resets rule 11: expired, returned, expired, expired goes to a person at the third expiry", async ({ database, people, sql }) => {
    const worker = await people.agent("poison");
    await people.operator.workItems.create({ id: "hb-poison", title: "Poison" });
    const lapse = async () => {
      const { lease } = (await worker.leases.claim({ workItemId: "hb-poison", durationSeconds: 1 }))!;
      await advanceClockPast(sql, lease.expiresAt);
    };
    const handBack = async () => {
      const { lease } = (await worker.leases.claim({ workItemId: "hb-poison" }))!;
      await worker.leases.handBack({ leaseId: lease.id, epoch: lease.epoch, reason: "not today" });
    };
    await lapse();
    await handBack(); // its claim recorded the first expiry
    await lapse();
    await lapse(); // its claim recorded the second
    await sweepExpiredLeases(database.db); // the third
    expect((await people.operator.leases.history({ workItemId: "hb-poison" })).map((lease) => lease.outcome)).toEqual([
      "expired", "returned", "expired", "expired",
    ]);
    expect(await helpRequests(sql, "hb-poison")).toHaveLength(1);
    expect((await people.operator.workItems.get({ id: "hb-poison" })).stage).toBe("needs_attention");
  });

  it("hand backs alone never send an item to a person", async ({ people, sql }) => {
    const worker = await people.agent("polite");
    await people.operator.workItems.create({ id: "hb-polite", title: "Polite" });
    for (let round = 0; round < 4; round++) {
      const { lease } = (await worker.leases.claim({ workItemId: "hb-polite" }))!;
      await worker.leases.handBack({ leaseId: lease.id, epoch: lease.epoch, reason: `round ${round}` });
    }
    expect(await helpRequests(sql, "hb-polite")).toHaveLength(0);
    expect((await people.operator.workItems.get({ id: "hb-polite" })).stage).toBe("ready");
  });
});
