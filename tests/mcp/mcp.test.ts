import { execFile } from "node:child_process";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { advanceClockPast } from "../support/fixtures";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "packages", "agent", "bin", "work-graph.js");
const TOOLS = ["queue", "claim", "show", "note", "release", "cancel", "decompose", "ask", "create", "hand_back"];

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
let sql: pg.Client;
let operator: Awaited<ReturnType<typeof callerAs>>["api"];
const sessions: Session[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer(database.instance);
  sql = await database.connect();
  operator = (await callerAs(database.instance, "operator")).api;
});
afterAll(async () => {
  for (const session of sessions) await session.client.close().catch(() => {});
  await server?.close();
  await database?.close();
});

interface Session {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
}

/** A real MCP client (the SDK's) talking to `work-graph mcp` spawned from the built package over stdio. */
async function connect(token: string): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp"],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", WORK_GRAPH_URL: server.url, WORK_GRAPH_TOKEN: token },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "work-graph-test", version: "1.0.0" });
  await client.connect(transport);
  const session = { client, transport, stderr: () => stderr };
  sessions.push(session);
  return session;
}

interface ToolResult {
  isError?: boolean;
  text: string;
  data: Record<string, unknown>;
}

async function call(session: Session, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const result = await session.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const content = result.content as { type: string; text: string }[];
  return { isError: result.isError as boolean | undefined, text: content.map((part) => part.text).join("\n"), data: (result.structuredContent ?? {}) as Record<string, unknown> };
}

const agentToken = async (workerId: string) => (await callerAs(database.instance, "agent", workerId)).token;
const noteCount = async (workItemId: string) =>
  Number((await sql.query<{ n: string }>("SELECT count(*) AS n FROM notes WHERE work_item_id = $1", [workItemId])).rows[0]!.n);

/** The lease's renewals in the database's own log, in order. */
async function renewalsOf(workItemId: string) {
  const events = await operator.events.list({ workItemId, limit: 500 });
  return events.items.filter((event) => event.type === "lease.claimed" || event.type === "lease.renewed");
}

describe("work-graph mcp", () => {
  it("lists exactly the documented tools, each described for a model, with the same workflow as `work-graph prime`", async () => {
    const session = await connect(await agentToken("mcp-lister"));
    const { tools } = await session.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOLS].sort());
    for (const tool of tools) {
      expect(tool.description!.length, tool.name).toBeGreaterThan(100);
      expect(tool.inputSchema.type).toBe("object");
    }
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName.claim!.inputSchema.properties ?? {}).sort()).toEqual(["durationSeconds", "parentId", "projectId", "waitSeconds", "workItemId"]);
    expect(Object.keys(byName.ask!.inputSchema.properties ?? {}).sort()).toEqual(["blocking", "context", "kind", "options", "question", "waitSeconds", "workItemId"]);
    expect(byName.release!.inputSchema.required).toEqual(expect.arrayContaining(["workItemId", "evidence"]));
    expect(byName.note!.description).toContain("LEASE_NOT_CURRENT");

    const instructions = session.client.getInstructions()!;
    const prime = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [BIN, "prime"], { env: { NODE_ENV: "test", PATH: process.env.PATH } }, (error, stdout) => (error ? reject(error) : resolve(stdout))));
    for (const shared of [
      "You hold an item through a LEASE that expires. Every write is checked against it.",
      "ready items, in the order your next claim takes them",
      "record what you did and found, as you go",
      "Blocking by default: your lease ends and the item waits for an operator.",
      "split it into child items (your lease ends; the parent waits for its children)",
    ]) {
      expect(instructions).toContain(shared);
      expect(prime).toContain(shared);
    }
    expect(instructions).toContain("release { workItemId, evidence");
    expect(prime).toContain("work-graph release <item> --evidence");
  });

  it("claims, notes and releases as the token's worker, and never writes with a lease it did not obtain", async () => {
    const token = await agentToken("mcp-worker");
    await operator.workItems.create({ id: "mcp-flow", title: "Write the MCP guide", description: "For Claude Code users." });
    await operator.workItems.create({ id: "mcp-other", title: "Claimed elsewhere" });
    const session = await connect(token);

    const queue = await call(session, "queue", {});
    expect(queue.text).toContain("mcp-flow - Write the MCP guide");

    const claimed = await call(session, "claim", { workItemId: "mcp-flow" });
    expect(claimed.isError).toBeFalsy();
    expect(claimed.text).toContain("Claimed mcp-flow - Write the MCP guide");
    expect(claimed.data).toMatchObject({ claimed: true, lease: { workerId: "mcp-worker", epoch: 1 } });

    const noted = await call(session, "note", { workItemId: "mcp-flow", content: "outlined the guide" });
    expect(noted).toMatchObject({ text: "Noted on mcp-flow." });
    const shown = await call(session, "show", { workItemId: "mcp-flow" });
    expect(shown.text).toContain("This session holds its lease (epoch 1).");
    expect(shown.text).toContain("outlined the guide");

    const released = await call(session, "release", { workItemId: "mcp-flow", evidence: "guide written, links checked" });
    expect(released.text).toContain("Released mcp-flow");
    const item = await operator.workItems.get({ id: "mcp-flow" });
    expect(item.stage).toBe("released");
    const [lease] = await operator.leases.history({ workItemId: "mcp-flow" });
    expect(lease).toMatchObject({ workerId: "mcp-worker", outcome: "released" });
    const notes = await operator.notes.list({ workItemId: "mcp-flow" });
    expect(notes.items.map((note) => [note.workerId, note.content])).toEqual([["mcp-worker", "outlined the guide"]]);

    // The same worker's token claims another item outside this session: the session must not write with that lease.
    const elsewhere = await server.client(token).leases.claim.mutate({ workItemId: "mcp-other" });
    expect(elsewhere?.lease.workerId).toBe("mcp-worker");
    const refused = await call(session, "note", { workItemId: "mcp-other", content: "not mine" });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^LEASE_NOT_CURRENT/);
    const released2 = await call(session, "release", { workItemId: "mcp-other", evidence: "not mine" });
    expect(released2.text).toMatch(/^LEASE_NOT_CURRENT/);
    expect(await noteCount("mcp-other")).toBe(0);
    expect((await operator.workItems.get({ id: "mcp-other" })).stage).toBe("leased");
  });

  it("keeps a 3 s lease live past its expiry by renewing it in the background, each renewal before the last expiry", async () => {
    await operator.workItems.create({ id: "mcp-long", title: "Long task" });
    const session = await connect(await agentToken("mcp-renewer"));
    const claimed = await call(session, "claim", { workItemId: "mcp-long", durationSeconds: 3 });
    const first = claimed.data.lease as { id: string; expiresAt: string };
    // The work goes on until the session has renewed five times (a renewal every third of 3 s).
    await expect.poll(async () => (await renewalsOf("mcp-long")).length, { timeout: 20_000, interval: 200 }).toBeGreaterThanOrEqual(6);
    const { rows } = await sql.query<{ past: boolean }>("SELECT work_graph_clock() > $1::timestamptz AS past", [first.expiresAt]);
    expect(rows[0]!.past).toBe(true);
    const item = await operator.workItems.get({ id: "mcp-long" });
    expect(item.stage).toBe("leased");
    expect(item.currentLease).toMatchObject({ id: first.id, epoch: 1, endedAt: null });
    expect(Date.parse(item.currentLease!.expiresAt)).toBeGreaterThan(Date.parse(first.expiresAt));
    const renewals = await renewalsOf("mcp-long");
    for (let i = 1; i < renewals.length; i++) {
      expect(Date.parse(renewals[i]!.createdAt)).toBeLessThan(Date.parse(String(renewals[i - 1]!.data.expiresAt)));
    }
    expect(await call(session, "note", { workItemId: "mcp-long", content: "still going" })).toMatchObject({ text: "Noted on mcp-long." });
  });

  it("ask with waitSeconds waits on the server for the operator's answer and resumes at epoch 2 with it", async ({ annotate }) => {
    await operator.workItems.create({ id: "mcp-ask", title: "Pick a colour" });
    const session = await connect(await agentToken("mcp-asker"));
    await call(session, "claim", { workItemId: "mcp-ask" });
    let returnedAt: number | null = null;
    const asking = call(session, "ask", { workItemId: "mcp-ask", question: "Blue or green?", options: ["blue", "green"], waitSeconds: 120 })
      .finally(() => (returnedAt = performance.now()));

    const request = await vi.waitFor(async () => {
      const [open] = (await operator.attention.list({ status: "open", workItemId: "mcp-ask" })).items;
      if (!open) throw new Error("the question is not asked yet");
      return open;
    }, { timeout: 30_000, interval: 50 });
    expect(request).toMatchObject({ question: "Blue or green?", kind: "decision", blocking: true, workerId: "mcp-asker" });
    expect((await operator.workItems.get({ id: "mcp-ask" })).stage).toBe("needs_attention");
    // The session waits on the server (attention.wait), not by asking again and again.
    await vi.waitFor(() => expect(database.instance.wakeups.waitingForAttention).toBe(1), { timeout: 30_000, interval: 20 });
    expect(returnedAt).toBeNull();
    const answeredAt = performance.now();
    await operator.attention.resolve({ id: request.id, resolution: "blue" });

    const answered = await asking;
    const latencyMs = returnedAt! - answeredAt;
    await annotate(`ask returned ${Math.round(latencyMs)} ms after the answer was given (including the re-claim)`);
    expect(database.instance.wakeups.waitingForAttention).toBe(0);
    expect(answered.isError).toBeFalsy();
    expect(answered.text).toContain("Answer: blue");
    expect(answered.data).toMatchObject({ answered: true, request: { status: "resolved", resolution: "blue" }, lease: { epoch: 2, workerId: "mcp-asker" } });
    // The new lease is the session's: it writes with it.
    expect(await call(session, "note", { workItemId: "mcp-ask", content: "going with blue" })).toMatchObject({ text: "Noted on mcp-ask." });
    const notes = await operator.notes.list({ workItemId: "mcp-ask" });
    expect(notes.items.map((note) => note.epoch)).toEqual([2]);
  });

  it("a lease taken over while the session was frozen makes the next call fail with LEASE_NOT_CURRENT and write nothing", async () => {
    await operator.workItems.create({ id: "mcp-taken", title: "Contested" });
    const session = await connect(await agentToken("mcp-sleeper"));
    const claimed = await call(session, "claim", { workItemId: "mcp-taken", durationSeconds: 2 });
    const lease = claimed.data.lease as { expiresAt: string };
    const pid = session.transport.pid!;
    process.kill(pid, "SIGSTOP"); // a laptop lid closing: no renewals
    try {
      const frozen = await operator.workItems.get({ id: "mcp-taken" });
      await advanceClockPast(sql, frozen.currentLease!.expiresAt ?? lease.expiresAt);
      const takeover = await server.client(await agentToken("mcp-rival")).leases.claim.mutate({ workItemId: "mcp-taken" });
      expect(takeover?.lease.epoch).toBe(2);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    const refused = await call(session, "note", { workItemId: "mcp-taken", content: "I was asleep" });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^LEASE_NOT_CURRENT/);
    expect(refused.text).toContain("Stop working on mcp-taken");
    const again = await call(session, "release", { workItemId: "mcp-taken", evidence: "done?" });
    expect(again.text).toMatch(/^LEASE_NOT_CURRENT/);
    expect(await noteCount("mcp-taken")).toBe(0);
    const item = await operator.workItems.get({ id: "mcp-taken" });
    expect(item).toMatchObject({ stage: "leased", currentLease: { epoch: 2, workerId: "mcp-rival" } });
  });

  it("closing the session hands its leases back: the items are in the queue again within 10 s", async () => {
    await operator.workItems.create({ id: "mcp-close-a", title: "A" });
    await operator.workItems.create({ id: "mcp-close-b", title: "B" });
    const session = await connect(await agentToken("mcp-closer"));
    await call(session, "claim", { workItemId: "mcp-close-a" });
    await call(session, "claim", { workItemId: "mcp-close-b", durationSeconds: 3600 });
    expect((await operator.workItems.get({ id: "mcp-close-a" })).stage).toBe("leased");

    await session.client.close(); // closes the server's stdin
    await vi.waitFor(async () => {
      const [a, b] = await Promise.all([operator.workItems.get({ id: "mcp-close-a" }), operator.workItems.get({ id: "mcp-close-b" })]);
      expect([a.stage, b.stage]).toEqual(["ready", "ready"]);
    }, { timeout: 10_000, interval: 100 });
    const reclaimed = await server.client(await agentToken("mcp-next")).leases.claim.mutate({ workItemId: "mcp-close-b" });
    expect(reclaimed?.lease.epoch).toBe(2);
    expect(session.stderr()).toBe("");
  });

  it("SIGTERM hands the session's leases back too", async () => {
    await operator.workItems.create({ id: "mcp-term", title: "Interrupted" });
    const session = await connect(await agentToken("mcp-terminated"));
    await call(session, "claim", { workItemId: "mcp-term", durationSeconds: 3600 });
    const exited = new Promise<void>((resolve) => (session.transport.onclose = () => resolve()));
    process.kill(session.transport.pid!, "SIGTERM");
    await exited;
    const item = await vi.waitFor(async () => {
      const current = await operator.workItems.get({ id: "mcp-term" });
      expect(current.stage).toBe("ready");
      return current;
    }, { timeout: 10_000, interval: 100 });
    expect(item.currentLease).toBeNull();
  });
});
