/** Operator commands on workers: list them, drain one (it claims nothing new), undrain it. */
import type { Command } from "commander";
import { action, type Sink } from "../context";
import { oneLine, plural, table } from "../format";

export function workerCommands(program: Command, sink: Sink) {
  program.command("workers")
    .description("every worker: live leases, last seen, last-hour counts, drained state, capabilities")
    .action(action(sink, async (context) => {
      const workers = await context.client().workers.list.query({});
      const human = workers.length === 0
        ? "No workers seen yet."
        : table(workers.map((worker) => [
          worker.workerId, String(worker.liveLeases), worker.lastSeenAt ?? "never",
          `${worker.lastHour.claimed}/${worker.lastHour.released}/${worker.lastHour.expired}/${worker.lastHour.revoked}`,
          worker.drained ? `drained${worker.drainReason ? `: ${oneLine(worker.drainReason, 40)}` : ""}` : "-",
          worker.capabilities?.join(",") || "-", // a server before v3 sends none
        ]), ["worker", "live", "last seen", "last hour claimed/released/expired/revoked", "drained", "capabilities"]);
      return { data: workers, human };
    }));

  program.command("drain")
    .description("stop <worker> claiming (operator); its claims then exit 9, its leases carry on")
    .usage("<worker> [--reason R]")
    .argument("<worker>")
    .option("--reason <R>", "why (shown to the worker and on the dashboard)")
    .action(action(sink, async (context, options: { reason?: string }, workerId: string) => {
      const worker = await context.client().workers.drain.mutate({ workerId, reason: options.reason });
      return { data: worker, human: `Drained ${workerId}: it claims nothing new; its ${plural(worker.liveLeases, "live lease")} carry on.` };
    }));

  program.command("undrain")
    .description("let a drained worker claim again (operator)")
    .usage("<worker>")
    .argument("<worker>")
    .action(action(sink, async (context, _options: object, workerId: string) => {
      const worker = await context.client().workers.undrain.mutate({ workerId });
      return { data: worker, human: `Undrained ${workerId}: it may claim again.` };
    }));
}
