/**
 * A small Work Graph agent: drains the queue with `runWorker`, writing a note per item.
 *
 *   WORK_GRAPH_URL=http://localhost:3000 WORK_GRAPH_TOKEN=wga_… npx tsx examples/worker.ts
 *
 * Environment:
 *   WORK_GRAPH_URL          server (default http://localhost:3000)
 *   WORK_GRAPH_TOKEN        an agent token (npx work-graph tokens create --role agent --worker-id …)
 *   WORK_SECONDS            pretend work per item, in seconds (default 5)
 *   LEASE_SECONDS           lease duration; renewed automatically every third of it (default 30)
 *   EXIT_WHEN_IDLE_SECONDS  stop once the queue has been empty this long (default: run until Ctrl-C)
 *
 * Ctrl-C (or SIGTERM) stops claiming and lets the item in hand finish; press it twice to hand
 * the item back at once.
 */
import { createWorkGraphClient, runWorker, type WorkContext } from "../packages/agent/src/sdk";

const url = process.env.WORK_GRAPH_URL ?? "http://localhost:3000";
const token = process.env.WORK_GRAPH_TOKEN;
if (!token) {
  console.error("Set WORK_GRAPH_TOKEN to an agent token (npx work-graph tokens create --role agent --worker-id my-agent).");
  process.exit(2);
}
const workSeconds = Number(process.env.WORK_SECONDS ?? 5);
const idleSeconds = process.env.EXIT_WHEN_IDLE_SECONDS;

const client = createWorkGraphClient({ url, token });
const log = (message: string) => console.log(`${new Date().toISOString()} ${message}`);

/** Waits `ms`, or rejects as soon as the lease is lost / the worker is told to stop. */
function work(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

async function handle({ workItem, lease, attention, signal, note }: WorkContext) {
  await note(`picked up by ${lease.workerId} (epoch ${lease.epoch})`);
  for (const answered of attention.filter((request) => request.status === "resolved")) {
    await note(`using the answer to "${answered.question}": ${answered.resolution}`);
  }
  await work(workSeconds * 1000, signal); // the real work goes here; stop when `signal` aborts
  return { evidence: `${workItem.title}: done in ${workSeconds}s by ${lease.workerId}` };
}

const summary = await runWorker({
  client,
  handler: handle,
  durationSeconds: Number(process.env.LEASE_SECONDS ?? 30),
  pollIntervalMs: 500,
  maxPollIntervalMs: 5000,
  stopWhenIdleMs: idleSeconds === undefined ? undefined : Number(idleSeconds) * 1000,
  onEvent(event) {
    switch (event.type) {
      case "claimed":
        log(`claimed ${event.workItem.id} "${event.workItem.title}" (epoch ${event.lease.epoch})`);
        break;
      case "renewed":
        log(`renewed ${event.workItemId} until ${event.lease.expiresAt}`);
        break;
      case "lost":
        log(`LOST ${event.workItemId}: ${event.error.reason} ${event.error.leaseKind ?? ""} - stopped working on it`);
        break;
      case "finished":
        log(`${event.workItemId}: ${event.outcome}`);
        break;
      case "renew-failed":
      case "error":
        log(`retrying after ${event.error.reason}: ${event.error.message}`);
        break;
      case "stopping":
        log(`stopping (${event.cause}): no more claims; the item in hand (if any) is finished first`);
        break;
    }
  },
});
log(`stopped (${summary.stoppedBy}): ${summary.released} released, ${summary.lost} lost, ${summary.abandoned} handed back`);
