import { describe, expect, vi } from "vitest";
import { type Actors, type Api, graphTest } from "../graph/support";
import { advanceClockPast } from "../support/fixtures";

/*
 * Rule 9: for WORK_GRAPH_CONTINUITY_SECONDS after an item's last blocking attention request is
 * resolved, its previous worker's next-claim takes it ahead of other ready items and anyone
 * else's only after them; a named claim takes it at once. The setting is read at call time.
 */

const it = graphTest({ poolSize: 5, continuity: true });

/** `worker` claims `id`, asks a blocking question, and an operator answers it. Returns the resolution time. */
async function pauseAndResolve(actors: Actors, worker: Api, id: string): Promise<string> {
  const claimed = (await worker.leases.claim({ workItemId: id, durationSeconds: 600 }))!;
  const { request } = await worker.attention.request({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, kind: "decision", question: "Go on?" });
  const resolved = await actors.operator.attention.resolve({ id: request.id, resolution: "Yes" });
  expect(resolved.workItem.stage).toBe("ready");
  return resolved.request.resolvedAt!;
}

const queueOf = async (api: Api, workerId?: string) => (await api.workItems.queue({ limit: 50, workerId })).map((item) => item.id);

/** Next-claims by `api` until nothing is ready; the ids in claim order. */
async function drain(api: Api): Promise<string[]> {
  const taken: string[] = [];
  for (;;) {
    const claimed = await api.leases.claim({ durationSeconds: 600 });
    if (!claimed) return taken;
    taken.push(claimed.workItem.id);
  }
}

/** held (priority 0, answered for w1 just now), hi (10), mid (5), low (-1). */
async function scenario(actors: Actors, heldPriority = 0) {
  const { operator } = actors;
  const w1 = await actors.agent("w1");
  const w2 = await actors.agent("w2");
  await operator.workItems.create({ id: "held", title: "Held", priority: heldPriority });
  await operator.workItems.create({ id: "hi", title: "High", priority: 10 });
  await operator.workItems.create({ id: "mid", title: "Mid", priority: 5 });
  await operator.workItems.create({ id: "low", title: "Low", priority: -1 });
  const resolvedAt = await pauseAndResolve(actors, w1, "held");
  return { w1, w2, resolvedAt };
}

describe("continuity (rule 9)", () => {
  it("the previous worker's next-claim takes the item ahead of higher-priority items; its queue shows that order", async ({ actors }) => {
    vi.stubEnv("WORK_GRAPH_CONTINUITY_SECONDS", "600");
    const { w1 } = await scenario(actors);
    const queue = await queueOf(w1);
    expect(queue).toEqual(["held", "hi", "mid", "low"]);
    expect(await queueOf(actors.operator, "w1")).toEqual(queue);
    const first = await w1.leases.claim({ durationSeconds: 600 });
    expect(first).toMatchObject({ workItem: { id: "held" }, lease: { epoch: 2 } });
    expect(first!.attention.map((r) => r.resolution)).toEqual(["Yes"]);
    expect([first!.workItem.id, ...(await drain(w1))]).toEqual(queue);
  });

  it("another worker's next-claim takes it only after every other ready item; its queue shows that order", async ({ actors }) => {
    vi.stubEnv("WORK_GRAPH_CONTINUITY_SECONDS", "600");
    const { w1, w2 } = await scenario(actors);
    const queue = await queueOf(w2);
    expect(queue).toEqual(["hi", "mid", "low", "held"]);
    expect(await queueOf(actors.operator, "w2")).toEqual(queue);
    // An operator's queue (no worker) is what any worker without continuity sees.
    expect(await queueOf(actors.operator)).toEqual(queue);
    // Meanwhile the previous worker's queue still starts with it.
    expect(await queueOf(w1)).toEqual(["held", "hi", "mid", "low"]);
    const taken = await drain(w2);
    expect(taken).toEqual(queue);
  });

  it("is no reservation: a named claim by anyone takes the item at once", async ({ actors }) => {
    vi.stubEnv("WORK_GRAPH_CONTINUITY_SECONDS", "600");
    const { w1, w2 } = await scenario(actors);
    const named = (await w2.leases.claim({ workItemId: "held", durationSeconds: 600 }))!;
    expect(named).toMatchObject({ workItem: { id: "held" }, lease: { epoch: 2, workerId: "w2" } });
    expect(named.attention.map((r) => r.resolution)).toEqual(["Yes"]);
    // The claim used the preference up: the previous worker now just sees the normal order.
    expect(await queueOf(w1)).toEqual(["hi", "mid", "low"]);
    expect(await drain(w1)).toEqual(["hi", "mid", "low"]);
  });

  it("after the window expires the normal order applies", async ({ actors, sql: client }) => {
    vi.stubEnv("WORK_GRAPH_CONTINUITY_SECONDS", "3");
    // held has the highest priority: inside the window another worker sees it last, after it first.
    const { w1, w2, resolvedAt } = await scenario(actors, 20);
    expect(await queueOf(w2)).toEqual(["hi", "mid", "low", "held"]);
    expect(await queueOf(w1)).toEqual(["held", "hi", "mid", "low"]);
    await advanceClockPast(client, new Date(Date.parse(resolvedAt) + 3_050).toISOString());
    const queue = await queueOf(w2);
    expect(queue).toEqual(["held", "hi", "mid", "low"]);
    expect(await queueOf(w1)).toEqual(queue);
    expect(await drain(w2)).toEqual(queue);
  });

  it("a window of 0 turns continuity off", async ({ actors }) => {
    vi.stubEnv("WORK_GRAPH_CONTINUITY_SECONDS", "0");
    const { w1, w2 } = await scenario(actors);
    // Plain priority order: held (0) between mid (5) and low (-1), for everyone.
    expect(await queueOf(w1)).toEqual(["hi", "mid", "held", "low"]);
    expect(await queueOf(w2)).toEqual(["hi", "mid", "held", "low"]);
    expect(await drain(w1)).toEqual(["hi", "mid", "held", "low"]);
  });

  it("the setting is read at call time, and the preference outlives a spell of being blocked", async ({ actors }) => {
    vi.stubEnv("WORK_GRAPH_CONTINUITY_SECONDS", "0");
    const { operator } = actors;
    const { w1 } = await scenario(actors);
    expect(await queueOf(w1)).toEqual(["hi", "mid", "held", "low"]);
    vi.stubEnv("WORK_GRAPH_CONTINUITY_SECONDS", "600");
    expect(await queueOf(w1)).toEqual(["held", "hi", "mid", "low"]);
    // Blocked for a while (not in anyone's queue), then unblocked inside the window.
    await operator.workItems.create({ id: "gate", title: "Gate", priority: -50 });
    await operator.workItems.addDependency({ workItemId: "held", dependsOnId: "gate" });
    expect(await queueOf(w1)).toEqual(["hi", "mid", "low", "gate"]);
    await operator.workItems.cancel({ id: "gate", reason: "not needed" });
    expect(await queueOf(w1)).toEqual(["held", "hi", "mid", "low"]);
    expect((await w1.leases.claim({ durationSeconds: 60 }))!.workItem.id).toBe("held");
  });
});
