/**
 * Webhook delivery latency: events committed at a steady rate (work items created through the
 * real operation, one transaction each), one webhook, the production dispatcher (defaults:
 * 500 ms due-query poll, 16 attempts in flight) and a local HTTP receiver answering 204.
 * Latency = receiver's arrival time − the moment the creating transaction's commit returned,
 * both on this process's monotonic clock.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createDb } from "../server/db";
import { createWorkItem } from "../server/operations/create";
import { createWebhook } from "../server/integrations/webhooks/operations";
import { startWebhookDispatcher } from "../server/integrations/webhooks/dispatcher";
import { percentile } from "./support";

export interface WebhookLatencyResult {
  eventsPerSecond: number;
  /** The rate the writers achieved (lower than asked when commits could not keep up). */
  achievedPerSecond: number;
  seconds: number;
  committed: number;
  delivered: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export async function webhookLatency(url: string, options: { eventsPerSecond: number; seconds: number }): Promise<WebhookLatencyResult> {
  process.env.WORK_GRAPH_SECRET_KEY ??= randomBytes(32).toString("hex");
  const committedAt = new Map<string, number>();
  const latencies: number[] = [];
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const arrived = performance.now();
      const { workItemId } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { workItemId: string };
      const committed = committedAt.get(workItemId);
      if (committed !== undefined) latencies.push(arrived - committed);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const db = createDb(url, { poolSize: 16 });
  const dispatcher = startWebhookDispatcher(db, { publicUrl: "http://localhost:3000" });
  const caller = { tokenId: "bench", role: "operator" as const, workerId: null, actor: "operator:bench", projects: [], capabilities: [] };
  try {
    await createWebhook(db, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ["work_item.created"], format: "json" });
    const total = Math.round(options.eventsPerSecond * options.seconds);
    const started = performance.now();
    const writes = new Set<Promise<void>>();
    for (let i = 0; i < total; i++) {
      // Paced by the schedule, not by the previous write (at most 32 in flight, so an
      // overloaded machine lowers the achieved rate instead of queueing without bound).
      const due = started + (i * 1000) / options.eventsPerSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      while (writes.size >= 32) await Promise.race(writes);
      const id = `hook-${i}`;
      const write: Promise<void> = createWorkItem(db, caller, { id, title: `webhook bench ${i}` })
        .then(() => void committedAt.set(id, performance.now()))
        .finally(() => writes.delete(write));
      writes.add(write);
    }
    await Promise.all(writes);
    const achievedPerSecond = total / ((performance.now() - started) / 1000);
    const deadline = performance.now() + 30_000;
    while (latencies.length < total && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    return {
      eventsPerSecond: options.eventsPerSecond,
      achievedPerSecond,
      seconds: options.seconds,
      committed: total,
      delivered: latencies.length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: Math.max(0, ...latencies),
    };
  } finally {
    await dispatcher.stop();
    await db.$disconnect();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}
