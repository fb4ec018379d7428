/**
 * The agents of the over-HTTP measurements, in their own process (as agents are): one
 * keep-alive connection and one agent token per worker, each looping claim → release against
 * the server at argv[2] (several, comma-separated: workers take them in turn) in raw HTTP/JSON (docs/agents.md "Raw HTTP"). A lean client on purpose:
 * on 2 cores the load generator shares the CPU with the server it measures, and fetch-based
 * clients (@trpc/client, the SDK) cost several times more CPU per call than node:http — that
 * cost is the agent's, on the agent's machine, and is not what the row measures.
 * Input (JSON in argv[3]): { tokens, windowMs, warmupMs }. Prints one line `warm` when the
 * warm-up is over, then one JSON line { rate, cpuMs, claimP50Ms, claimP99Ms, floorP50Ms,
 * renewP50Ms } (cycles/s, this process's CPU, the claim round trip's median and 99th
 * percentile, and with one worker: the median round trip of GET /api/health/live on the same
 * connection, what HTTP between two processes costs here before any API work, and the median
 * of 300 heartbeats (leases.renew) on one lease).
 */
import http from "node:http";
import { timedLoops } from "./support";

const [urls, input] = process.argv.slice(2);
const { tokens, windowMs, warmupMs } = JSON.parse(input!) as { tokens: string[]; windowMs: number; warmupMs: number };
const servers = urls!.split(",").map((url) => new URL(url));

function clientFor(token: string, base: URL) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return <T>(procedure: string, body?: unknown) =>
    new Promise<T>((resolve, reject) => {
      const payload = body === undefined ? "" : JSON.stringify(body);
      const request = http.request(
        {
          host: base.hostname,
          port: base.port,
          path: body === undefined ? procedure : `/api/trpc/${procedure}`,
          method: body === undefined ? "GET" : "POST",
          agent,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            if (response.statusCode !== 200) return reject(new Error(`${procedure}: HTTP ${response.statusCode}: ${text.slice(0, 300)}`));
            resolve(body === undefined ? (undefined as T) : (JSON.parse(text) as { result: { data: T } }).result.data);
          });
          response.on("error", reject);
        },
      );
      request.on("error", reject);
      request.end(payload);
    });
}

const clients = tokens.map((token, worker) => clientFor(token, servers[worker % servers.length]!));
let claimMs: number[] = [];
const cycle = async (worker: number) => {
  const call = clients[worker]!;
  const started = performance.now();
  const claimed = await call<{ lease: { id: string; epoch: number } } | null>("leases.claim", { durationSeconds: 300 });
  claimMs.push(performance.now() - started);
  if (!claimed) return false;
  await call("leases.release", { leaseId: claimed.lease.id, epoch: claimed.lease.epoch, evidence: "bench" });
  return true;
};
await timedLoops(clients.length, warmupMs, cycle);
console.log("warm");
claimMs = [];
const cpu = process.cpuUsage();
const rate = await timedLoops(clients.length, windowMs, cycle);
const used = process.cpuUsage(cpu);
const quantile = (values: number[], q: number) => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))] ?? null;
const floorMs: number[] = [];
const renewMs: number[] = [];
if (clients.length === 1) {
  const call = clients[0]!;
  for (let i = 0; i < 300; i++) {
    const started = performance.now();
    await call("/api/health/live");
    floorMs.push(performance.now() - started);
  }
  const claimed = await call<{ lease: { id: string; epoch: number } } | null>("leases.claim", { durationSeconds: 300 });
  if (claimed) {
    for (let i = 0; i < 300; i++) {
      const started = performance.now();
      await call("leases.renew", { leaseId: claimed.lease.id, epoch: claimed.lease.epoch, durationSeconds: 300 });
      renewMs.push(performance.now() - started);
    }
    await call("leases.release", { leaseId: claimed.lease.id, epoch: claimed.lease.epoch, evidence: "bench" });
  }
}
console.log(JSON.stringify({
  rate, cpuMs: (used.user + used.system) / 1000,
  claimP50Ms: quantile(claimMs, 0.5), claimP99Ms: quantile(claimMs, 0.99), floorP50Ms: quantile(floorMs, 0.5), renewP50Ms: quantile(renewMs, 0.5),
}));
