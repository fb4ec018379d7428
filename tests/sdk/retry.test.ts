import { describe, expect, it } from "vitest";
import { createWorkGraphClient, WorkGraphError } from "../../packages/agent/src/sdk";

/*
 * The client's retries go through the one retry policy (sdk/retry.ts): what is tried again,
 * how often, and what comes back after the last try. A scripted fetch stands in for the network.
 */

type Step = { status: number; body: unknown } | { fails: string };

function scriptedFetch(steps: Step[]) {
  const calls: { method: string; cancelled: boolean }[] = [];
  const fetch: typeof globalThis.fetch = async (_input, init) => {
    const step = steps[Math.min(calls.length, steps.length - 1)]!;
    const call = { method: init?.method ?? "GET", cancelled: false };
    calls.push(call);
    if ("fails" in step) throw Object.assign(new TypeError("fetch failed"), { cause: { code: step.fails } });
    const body = new ReadableStream({
      start: (controller) => {
        controller.enqueue(new TextEncoder().encode(JSON.stringify(step.body)));
        controller.close();
      },
      cancel: () => void (call.cancelled = true),
    });
    return new Response(body, { status: step.status, headers: { "content-type": "application/json" } });
  };
  return { fetch, calls };
}

const unavailable = { status: 503, body: { error: { message: "the database cannot be reached right now", code: -32603, data: { code: "INTERNAL_SERVER_ERROR", httpStatus: 503, reason: "UNAVAILABLE" } } } };
const healthy = { status: 200, body: { result: { data: { ok: true, database: "ok", now: "2026-12-04T00:00:00.000Z" } } } };
const retry = { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 };

describe("the client's retries", () => {
  it("tries a 503 again, freeing the refused answer, and returns the first good one", async () => {
    const { fetch, calls } = scriptedFetch([unavailable, unavailable, healthy]);
    const client = createWorkGraphClient({ url: "http://work-graph.test", fetch, retry });
    await expect(client.health.check.query()).resolves.toMatchObject({ ok: true });
    expect(calls.map((call) => call.cancelled)).toEqual([true, true, false]);
  });

  it("after the last try, the 503 itself is the answer: UNAVAILABLE", async () => {
    const { fetch, calls } = scriptedFetch([unavailable]);
    const client = createWorkGraphClient({ url: "http://work-graph.test", fetch, retry });
    const error = await client.health.check.query().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(WorkGraphError);
    expect(error).toMatchObject({ reason: "UNAVAILABLE", httpStatus: 503 });
    expect(calls).toHaveLength(3);
  });

  it("a mutation is tried again only when it never reached the server; a query also after a dropped connection", async () => {
    const refused = scriptedFetch([{ fails: "ECONNREFUSED" }, healthy]);
    await createWorkGraphClient({ url: "http://work-graph.test", token: "wga_x", fetch: refused.fetch, retry })
      .leases.claim.mutate({}).catch(() => {});
    expect(refused.calls.map((call) => call.method)).toEqual(["POST", "POST"]);

    const droppedMutation = scriptedFetch([{ fails: "ECONNRESET" }, healthy]);
    const lost = await createWorkGraphClient({ url: "http://work-graph.test", token: "wga_x", fetch: droppedMutation.fetch, retry })
      .leases.claim.mutate({}).catch((thrown: unknown) => thrown);
    expect(lost).toMatchObject({ reason: "NETWORK" });
    expect(droppedMutation.calls).toHaveLength(1);

    const droppedQuery = scriptedFetch([{ fails: "ECONNRESET" }, healthy]);
    await expect(createWorkGraphClient({ url: "http://work-graph.test", fetch: droppedQuery.fetch, retry }).health.check.query()).resolves.toMatchObject({ ok: true });
    expect(droppedQuery.calls).toHaveLength(2);
  });

  it("retry: false sends once", async () => {
    const { fetch, calls } = scriptedFetch([unavailable, healthy]);
    await createWorkGraphClient({ url: "http://work-graph.test", fetch, retry: false }).health.check.query().catch(() => {});
    expect(calls).toHaveLength(1);
  });
});
