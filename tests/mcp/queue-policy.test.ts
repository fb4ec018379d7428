import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { callerAs, startTestServer } from "../support/app";
import { createTestDatabase, type TestDatabase } from "../support/database";

/*
 * The MCP server speaks the queue policy (issue 24 items 5 and 6): the hand_back tool, claims
 * routed by the token's capabilities, WORK_GRAPH_PROJECT as the session's project, and a session
 * that ends hands its leases back with leases.handBack (outcome returned, not expired).
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "packages", "agent", "bin", "work-graph.js");

let database: TestDatabase;
let server: Awaited<ReturnType<typeof startTestServer>>;
let admin: Awaited<ReturnType<typeof callerAs>>["api"];
let operator: Awaited<ReturnType<typeof callerAs>>["api"];
const sessions: Session[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer(database.instance);
  admin = (await callerAs(database.instance, "admin")).api;
  operator = (await callerAs(database.instance, "operator")).api;
});
afterAll(async () => {
  for (const session of sessions) await session.client.close().catch(() => {});
  await server?.close();
  await database?.close();
});

interface Session {
  client: Client;
  stderr: () => string;
}

async function connect(token: string, env: Record<string, string> = {}): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp"],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", WORK_GRAPH_URL: server.url, WORK_GRAPH_TOKEN: token, ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: "work-graph-policy-test", version: "1.0.0" });
  await client.connect(transport);
  const session = { client, stderr: () => stderr };
  sessions.push(session);
  return session;
}

async function call(session: Session, name: string, args: Record<string, unknown>) {
  const result = await session.client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
  const content = result.content as { type: string; text: string }[];
  return { isError: result.isError as boolean | undefined, text: content.map((part) => part.text).join("\n"), data: (result.structuredContent ?? {}) as Record<string, unknown> };
}

const agentToken = async (workerId: string, capabilities: string[] = []) => (await admin.tokens.create({ role: "agent", workerId, capabilities })).token;

describe("work-graph mcp: queue policy", () => {
  it("offers hand_back with its documented arguments and explains when to hand back versus ask", async () => {
    const session = await connect(await agentToken("mcp-policy-lister"));
    const { tools } = await session.client.listTools();
    const handBack = tools.find((tool) => tool.name === "hand_back")!;
    expect(Object.keys(handBack.inputSchema.properties ?? {}).sort()).toEqual(["reason", "retryAfterSeconds", "workItemId"]);
    expect(handBack.inputSchema.required).toEqual(expect.arrayContaining(["workItemId", "reason"]));
    expect(handBack.description).toContain("Use ask instead when a person must decide or grant something");
    const create = tools.find((tool) => tool.name === "create")!;
    expect(Object.keys(create.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["projectId", "requires", "concurrencyKey", "notBefore", "delaySeconds"]));
    const instructions = session.client.getInstructions()!;
    expect(instructions).toContain("Hand back, ask or cancel?");
    expect(instructions).toContain("hand_back { workItemId, reason");
  });

  it("hand_back ends the session's lease returned, with the reason and retry time; the session writes with it no more", async () => {
    await operator.workItems.create({ id: "mcp-return", title: "Needs a tool this agent lacks", priority: 5_000 });
    const session = await connect(await agentToken("mcp-returner"));
    expect((await call(session, "claim", { workItemId: "mcp-return" })).isError).toBeFalsy();
    const handedBack = await call(session, "hand_back", { workItemId: "mcp-return", reason: "no browser in this sandbox", retryAfterSeconds: 120 });
    expect(handedBack.isError).toBeFalsy();
    expect(handedBack.text).toMatch(/^Handed mcp-return back \(lease epoch 1 ended, returned\)\. It is scheduled \(claimable again from 20/);
    const [lease] = await operator.leases.history({ workItemId: "mcp-return" });
    expect(lease).toMatchObject({ outcome: "returned", workerId: "mcp-returner" });
    const ended = (await operator.events.list({ workItemId: "mcp-return", limit: 50 })).items.find((event) => event.type === "lease.ended")!;
    expect(ended.data).toMatchObject({ reason: "no browser in this sandbox", retryAfterSeconds: 120 });
    expect((await operator.workItems.get({ id: "mcp-return" })).stage).toBe("scheduled");
    const after = await call(session, "note", { workItemId: "mcp-return", content: "still here?" });
    expect(after.isError).toBe(true);
    expect(after.text).toMatch(/^LEASE_NOT_CURRENT/);
  });

  it("claims route by the token's capabilities; WORK_GRAPH_PROJECT is the session's project for queue, claim and create", async () => {
    await admin.projects.create({ id: "mcp-web", name: "MCP web" });
    await operator.workItems.create({ id: "mcp-gpu", title: "Train", requires: ["gpu"], priority: 9_000, projectId: "mcp-web" });
    await operator.workItems.create({ id: "mcp-elsewhere", title: "Another project's", priority: 8_500 });
    await operator.workItems.create({ id: "mcp-browser", title: "Click through", requires: ["browser"], priority: 8_000, projectId: "mcp-web" });
    const session = await connect(await agentToken("mcp-browser-agent", ["browser"]), { WORK_GRAPH_PROJECT: "mcp-web" });

    const claimed = await call(session, "claim", {});
    expect(claimed.data).toMatchObject({ claimed: true, workItem: { id: "mcp-browser", projectId: "mcp-web" } });
    expect(claimed.text).toContain("project mcp-web, requires browser");
    const named = await call(session, "claim", { workItemId: "mcp-gpu" });
    expect(named.isError).toBe(true);
    expect(named.text).toMatch(/^NOT_CLAIMABLE/);
    expect(named.text).toContain("it requires gpu, which this worker lacks");

    const created = await call(session, "create", { title: "Follow-up", requires: ["browser"], delaySeconds: 300 });
    expect(created.data.workItem).toMatchObject({ projectId: "mcp-web", requires: ["browser"], stage: "scheduled" });

    // What is left that this session could take next: nothing (mcp-gpu needs a GPU, mcp-elsewhere is in another project).
    const queue = await call(session, "queue", {});
    expect(queue.data.items).toEqual([]);
    await operator.workItems.create({ id: "mcp-browser-2", title: "Click again", requires: ["browser"], projectId: "mcp-web" });
    expect(((await call(session, "queue", {})).data.items as { id: string }[]).map((item) => item.id)).toEqual(["mcp-browser-2"]);
  });

  it("a full concurrency key is a tool error that says so", async () => {
    await operator.limits.set({ key: "mcp-single", maxLeases: 1 });
    await operator.workItems.create({ id: "mcp-key-1", title: "One", concurrencyKey: "mcp-single" });
    await operator.workItems.create({ id: "mcp-key-2", title: "Two", concurrencyKey: "mcp-single" });
    const session = await connect(await agentToken("mcp-keyed"));
    expect((await call(session, "claim", { workItemId: "mcp-key-1" })).isError).toBeFalsy();
    const full = await call(session, "claim", { workItemId: "mcp-key-2" });
    expect(full.isError).toBe(true);
    expect(full.text).toMatch(/^LIMIT_REACHED/);
    expect(full.text).toContain("concurrency key mcp-single is full (1 of 1 live leases)");
  });

  it("ending the session hands its leases back with leases.handBack: outcome returned, the items ready at once", async () => {
    await operator.workItems.create({ id: "mcp-end", title: "Left unfinished" });
    const session = await connect(await agentToken("mcp-ender"));
    await call(session, "claim", { workItemId: "mcp-end", durationSeconds: 3600 });
    await session.client.close();
    const [lease] = await vi.waitFor(async () => {
      const history = await operator.leases.history({ workItemId: "mcp-end" });
      expect(history[0]!.outcome).not.toBeNull();
      return history;
    }, { timeout: 10_000, interval: 100 });
    expect(lease!.outcome).toBe("returned");
    expect((await operator.workItems.get({ id: "mcp-end" })).stage).toBe("ready");
    const ended = (await operator.events.list({ workItemId: "mcp-end", limit: 50 })).items.find((event) => event.type === "lease.ended")!;
    expect(ended.data).toMatchObject({ reason: "the agent's session ended before the item was finished" });
  });
});
