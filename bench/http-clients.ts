/**
 * The agents of the tRPC-over-HTTP measurement, in their own process (as agents are): one
 * @trpc/client per worker, each looping claim → release against the server at argv[2].
 * Input (JSON in argv[3]): { tokens, windowMs, warmupMs }. Prints one line `warm` when the
 * warm-up is over, then one JSON line { rate, cpuMs, claimP50Ms } (cycles/s, this process's
 * CPU, the median claim round trip).
 */
import { createTRPCClient, httpLink } from "@trpc/client";
import type { AppRouter } from "../server/trpc/root";
import { timedLoops } from "./support";

const [url, input] = process.argv.slice(2);
const { tokens, windowMs, warmupMs } = JSON.parse(input!) as { tokens: string[]; windowMs: number; warmupMs: number };
const clients = tokens.map((token) =>
  createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/api/trpc`, headers: { authorization: `Bearer ${token}` } })] }),
);
let claimMs: number[] = [];
const cycle = async (worker: number) => {
  const started = performance.now();
  const claimed = await clients[worker]!.leases.claim.mutate({ durationSeconds: 300 });
  claimMs.push(performance.now() - started);
  if (!claimed) return false;
  await clients[worker]!.leases.release.mutate({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, evidence: "bench" });
  return true;
};
await timedLoops(clients.length, warmupMs, cycle);
console.log("warm");
claimMs = [];
const cpu = process.cpuUsage();
const rate = await timedLoops(clients.length, windowMs, cycle);
const used = process.cpuUsage(cpu);
claimMs.sort((a, b) => a - b);
const claimP50Ms = claimMs[Math.floor(claimMs.length / 2)] ?? null;
console.log(JSON.stringify({ rate, cpuMs: (used.user + used.system) / 1000, claimP50Ms }));
