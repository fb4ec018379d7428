import { revokeToken } from "../../server/auth/tokens";
import { LEASE_NOT_CURRENT_KINDS, LEASE_OUTCOMES, STAGES } from "@work-graph/contract";
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MetricFamily } from "parse-prometheus-text-format";
import { sweepExpiredLeases } from "../../server/operations/sweep";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { refusal, advanceClockPast } from "../support/fixtures";
import { insertReadyItems } from "../support/factories";
import { sample, scrape } from "./support";

// Gauges are read fresh on every scrape here, so they can be compared with dashboard.summary at once.
process.env.WORK_GRAPH_METRICS_CACHE_MS = "0";

let database: TestDatabase;
let sql: pg.Client;
let server: Awaited<ReturnType<typeof startTestServer>>;
let operatorToken: string;
beforeAll(async () => {
  database = await createTestDatabase();
  sql = await database.connect();
  server = await startTestServer(database.instance);
  operatorToken = (await callerAs(database.instance, "operator")).token;
});
afterAll(async () => {
  await server.close();
  await database.close();
});

const scrapeAsOperator = async () => {
  const result = await scrape(server.url, operatorToken);
  expect(result.status).toBe(200);
  return result;
};

/** Scrapes before and after `work`; returns the change of each named series. */
async function delta(series: [name: string, labels?: Record<string, string>][], work: () => Promise<unknown>) {
  const before = await scrapeAsOperator();
  await work();
  const after = await scrapeAsOperator();
  return series.map(([name, labels]) => sample(after, name, labels) - sample(before, name, labels));
}

const REQUIRED: [string, MetricFamily["type"]][] = [
  ["work_graph_leases_claimed_total", "COUNTER"],
  ["work_graph_leases_ended_total", "COUNTER"],
  ["work_graph_fenced_total", "COUNTER"],
  ["work_graph_items", "GAUGE"],
  ["work_graph_attention_open", "GAUGE"],
  ["work_graph_attention_oldest_open_seconds", "GAUGE"],
  ["work_graph_claim_seconds", "HISTOGRAM"],
  ["work_graph_lease_held_seconds", "HISTOGRAM"],
  ["work_graph_attention_wait_seconds", "HISTOGRAM"],
  ["work_graph_http_requests_total", "COUNTER"],
];

describe("GET /api/metrics", () => {
  // First in the file: the scrape of a server that has granted and ended no lease yet.
  it("has every labelled series from the start, at zero, for each known label value", async () => {
    const { text } = await scrapeAsOperator();
    const value = (series: string) => new RegExp(`^${series.replace(/[{}+]/g, "\\$&")} (\\S+)$`, "m").exec(text)?.[1];
    for (const outcome of LEASE_OUTCOMES) {
      expect(value(`work_graph_leases_ended_total{outcome="${outcome}"}`), outcome).toBe("0");
      expect(value(`work_graph_lease_held_seconds_count{outcome="${outcome}"}`), outcome).toBe("0");
      expect(value(`work_graph_lease_held_seconds_sum{outcome="${outcome}"}`), outcome).toBe("0");
      expect(value(`work_graph_lease_held_seconds_bucket{le="+Inf",outcome="${outcome}"}`), outcome).toBe("0");
    }
    for (const kind of LEASE_NOT_CURRENT_KINDS) expect(value(`work_graph_fenced_total{kind="${kind}"}`), kind).toBe("0");
    for (const stage of STAGES) expect(value(`work_graph_items{stage="${stage}",project="default"}`), stage).toBe("0");
  });

  it("answers an operator and an admin with every required metric, typed, in the Prometheus text format", async () => {
    const admin = await callerAs(database.instance, "admin");
    for (const token of [operatorToken, admin.token]) {
      const result = await scrape(server.url, token);
      expect(result.status).toBe(200);
      expect(result.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
      const byName = new Map(result.families.map((family) => [family.name, family]));
      for (const [name, type] of REQUIRED) {
        expect(byName.get(name)?.type, name).toBe(type);
        expect(byName.get(name)?.help, name).not.toBe("");
      }
      expect(result.families.some((family) => family.name.startsWith("process_"))).toBe(true);
      expect(result.families.some((family) => family.name.startsWith("nodejs_"))).toBe(true);
      // Every outcome series exists before its first event, so alerts on rate() see it.
      for (const outcome of ["released", "cancelled", "decomposed", "attention_requested", "expired", "revoked"]) {
        expect(byName.get("work_graph_leases_ended_total")!.metrics.some((m) => m.labels?.outcome === outcome), outcome).toBe(true);
      }
    }
  });

  it("refuses an agent with 403 and a missing, unknown or revoked token with 401", async () => {
    const agent = await callerAs(database.instance, "agent", "metrics-agent");
    const revoked = await callerAs(database.instance, "operator");
    await revokeToken(database.db, revoked.caller.tokenId);
    expect((await scrape(server.url, agent.token)).status).toBe(403);
    expect((await scrape(server.url)).status).toBe(401);
    expect((await scrape(server.url, "wgo_not-a-real-token")).status).toBe(401);
    const refused = await scrape(server.url, revoked.token);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text)).toMatchObject({ reason: "UNAUTHENTICATED" });
  });
});

describe("counters move by exactly the work done", () => {
  it("one claim over HTTP: claimed +1, one claim timed, leases.claim 200 +1", async () => {
    await insertReadyItems(sql, "count-claim", 1);
    const agent = await callerAs(database.instance, "agent", "counter-1");
    const client = server.client(agent.token);
    const changes = await delta(
      [
        ["work_graph_leases_claimed_total"],
        ["work_graph_claim_seconds"],
        ["work_graph_http_requests_total", { procedure: "leases.claim", code: "200" }],
      ],
      () => client.leases.claim.mutate({ workItemId: "count-claim-00001" }),
    );
    expect(changes).toEqual([1, 1, 1]);
  });

  it("a release: released +1 with its hold time; releasing again is fenced as ended (409)", async () => {
    await insertReadyItems(sql, "count-release", 1);
    const agent = await callerAs(database.instance, "agent", "counter-2");
    const client = server.client(agent.token);
    const { lease } = (await client.leases.claim.mutate({ workItemId: "count-release-00001" }))!;
    const released = await delta(
      [["work_graph_leases_ended_total", { outcome: "released" }], ["work_graph_lease_held_seconds", { outcome: "released" }]],
      () => client.leases.release.mutate({ leaseId: lease.id, epoch: lease.epoch, evidence: "done" }),
    );
    expect(released).toEqual([1, 1]);
    const fenced = await delta(
      [
        ["work_graph_fenced_total", { kind: "ended" }],
        ["work_graph_leases_ended_total", { outcome: "released" }],
        ["work_graph_http_requests_total", { procedure: "leases.release", code: "409" }],
      ],
      () => client.leases.release.mutate({ leaseId: lease.id, epoch: lease.epoch, evidence: "again" }).catch(() => null),
    );
    expect(fenced).toEqual([1, 0, 1]);
  });

  it("fenced calls count by kind: unknown and superseded", async () => {
    await insertReadyItems(sql, "count-fence", 1);
    const first = await callerAs(database.instance, "agent", "counter-3a");
    const second = await callerAs(database.instance, "agent", "counter-3b");
    const { lease } = (await first.api.leases.claim({ workItemId: "count-fence-00001", durationSeconds: 1 }))!;
    await advanceClockPast(sql, lease.expiresAt);
    const reclaim = await delta(
      [["work_graph_leases_ended_total", { outcome: "expired" }], ["work_graph_leases_claimed_total"]],
      () => second.api.leases.claim({ workItemId: "count-fence-00001" }),
    );
    expect(reclaim).toEqual([1, 1]);
    const changes = await delta(
      [["work_graph_fenced_total", { kind: "superseded" }], ["work_graph_fenced_total", { kind: "unknown" }]],
      async () => {
        expect((await refusal(first.api.leases.renew({ leaseId: lease.id, epoch: lease.epoch }))).detail.kind).toBe("superseded");
        expect((await refusal(first.api.leases.note({ leaseId: randomUUID(), epoch: 1, content: "x" }))).detail.kind).toBe("unknown");
      },
    );
    expect(changes).toEqual([1, 1]);
  });

  it("a sweep expiry: expired +1 with its hold time", async () => {
    await insertReadyItems(sql, "count-sweep", 1);
    const agent = await callerAs(database.instance, "agent", "counter-4");
    const { lease } = (await agent.api.leases.claim({ workItemId: "count-sweep-00001", durationSeconds: 1 }))!;
    await advanceClockPast(sql, lease.expiresAt);
    const changes = await delta(
      [["work_graph_leases_ended_total", { outcome: "expired" }], ["work_graph_lease_held_seconds", { outcome: "expired" }]],
      async () => expect(await sweepExpiredLeases(database.db)).toBe(1),
    );
    expect(changes).toEqual([1, 1]);
  });

  it("a cancel cascade ends a descendant's expired lease: expired +1, and nothing for a refused cancel", async () => {
    const operator = await callerAs(database.instance, "operator");
    const agent = await callerAs(database.instance, "agent", "counter-5");
    await operator.api.workItems.create({ id: "cascade-root", title: "root" });
    await operator.api.workItems.create({ id: "cascade-child", title: "child", parentId: "cascade-root" });
    const { lease } = (await agent.api.leases.claim({ workItemId: "cascade-child", durationSeconds: 1 }))!;
    await advanceClockPast(sql, lease.expiresAt);
    const changes = await delta([["work_graph_leases_ended_total", { outcome: "expired" }]], () =>
      operator.api.workItems.cancel({ id: "cascade-root", reason: "not needed" }),
    );
    expect(changes).toEqual([1]);

    // A live descendant lease refuses the cancel (ITEM_LEASED): the transaction rolls back and counts nothing.
    await operator.api.workItems.create({ id: "cascade-root-2", title: "root" });
    await operator.api.workItems.create({ id: "cascade-child-2", title: "child", parentId: "cascade-root-2" });
    await agent.api.leases.claim({ workItemId: "cascade-child-2" });
    const refused = await delta([["work_graph_leases_ended_total", { outcome: "expired" }]], async () =>
      expect((await refusal(operator.api.workItems.cancel({ id: "cascade-root-2", reason: "x" }))).reason).toBe("ITEM_LEASED"),
    );
    expect(refused).toEqual([0]);
  });

  it("a blocking attention request and its answer: attention_requested +1, one wait observed", async () => {
    await insertReadyItems(sql, "count-attention", 1);
    const agent = await callerAs(database.instance, "agent", "counter-6");
    const operator = await callerAs(database.instance, "operator");
    const { lease } = (await agent.api.leases.claim({ workItemId: "count-attention-00001" }))!;
    const changes = await delta(
      [["work_graph_leases_ended_total", { outcome: "attention_requested" }], ["work_graph_attention_wait_seconds"], ["work_graph_attention_open"]],
      async () => {
        const { request } = await agent.api.attention.request({ leaseId: lease.id, epoch: lease.epoch, kind: "decision", question: "A or B?" });
        await operator.api.attention.resolve({ id: request.id, resolution: "A" });
      },
    );
    expect(changes).toEqual([1, 1, 0]);
  });

  it("a decomposition with a claimed child: decomposed +1 and claimed +1", async () => {
    await insertReadyItems(sql, "count-decompose", 1);
    const agent = await callerAs(database.instance, "agent", "counter-7");
    const { lease } = (await agent.api.leases.claim({ workItemId: "count-decompose-00001" }))!;
    const changes = await delta(
      [["work_graph_leases_ended_total", { outcome: "decomposed" }], ["work_graph_leases_claimed_total"]],
      () => agent.api.leases.decompose({ leaseId: lease.id, epoch: lease.epoch, children: [{ id: "count-decompose-child", title: "c" }], claimChildId: "count-decompose-child" }),
    );
    expect(changes).toEqual([1, 1]);
  });
});

describe("gauges", () => {
  it("equal dashboard.summary", async () => {
    const operator = await callerAs(database.instance, "operator");
    const agent = await callerAs(database.instance, "agent", "gauge-agent");
    await insertReadyItems(sql, "gauge-ready", 3);
    await operator.api.workItems.create({ id: "gauge-blocked", title: "b", dependsOn: ["gauge-ready-00001"] });
    const { lease } = (await agent.api.leases.claim({ workItemId: "gauge-ready-00002" }))!;
    await insertReadyItems(sql, "gauge-ask", 1);
    const asked = (await agent.api.leases.claim({ workItemId: "gauge-ask-00001" }))!.lease;
    await agent.api.attention.request({ leaseId: asked.id, epoch: asked.epoch, kind: "help", question: "?" });

    const summary = await operator.api.dashboard.summary();
    const scraped = await scrapeAsOperator();
    for (const [stage, count] of Object.entries(summary.stages)) {
      expect(sample(scraped, "work_graph_items", { stage }), stage).toBe(count);
    }
    expect(sample(scraped, "work_graph_attention_open")).toBe(summary.openAttention);
    expect(summary.openAttention).toBeGreaterThan(0);
    expect(sample(scraped, "work_graph_leases_active")).toBe(summary.activeLeases);
    // The oldest open request: the one raised above (the other one of this file was answered).
    const [oldest] = (await operator.api.attention.list({ status: "open" })).items;
    const age = (Date.parse(summary.now) - Date.parse(oldest!.createdAt)) / 1000;
    expect(sample(scraped, "work_graph_attention_oldest_open_seconds")).toBeGreaterThanOrEqual(age);
    expect(sample(scraped, "work_graph_attention_oldest_open_seconds")).toBeLessThan(age + 60);
    expect(summary.stages.blocked).toBeGreaterThan(0);
    expect(lease.workItemId).toBe("gauge-ready-00002");
  });
});
