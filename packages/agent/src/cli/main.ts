/**
 * `work-graph`: the Work Graph API from a shell. Config from WORK_GRAPH_URL / WORK_GRAPH_TOKEN
 * (flags --url / --token override). Human output by default, --json for machines; exit codes
 * by error reason (cli/exit-codes.ts). One file per command group in cli/commands/.
 *
 * The argument parser is commander: no dependencies of its own, typed, per-command options,
 * generated `<command> --help`, and exitOverride, so the exit codes stay ours.
 */
import { Command, CommanderError } from "commander";
import { toWorkGraphError, WorkGraphError } from "../sdk/errors";
import { agentCommands } from "./commands/agent";
import { attentionCommands } from "./commands/attention";
import { githubCommands } from "./commands/github";
import { importCommands } from "./commands/import";
import { itemCommands } from "./commands/items";
import { leaseCommands } from "./commands/leases";
import { policyCommands } from "./commands/policy";
import { tokenCommands } from "./commands/tokens";
import { workerCommands } from "./commands/workers";
import type { Output, Sink } from "./context";
import { EXIT, exitCodeFor } from "./exit-codes";
import { helpText, leafCommands, usageOf } from "./text";

function createProgram(sink: Sink): Command {
  const program = new Command("work-graph")
    .option("--url <URL>", "server base URL (default: $WORK_GRAPH_URL, else http://localhost:3000)")
    .option("--token <TOKEN>", "bearer token (default: $WORK_GRAPH_TOKEN)")
    .option("--json", "machine-readable output: the API's JSON on stdout, errors as JSON on stderr")
    .exitOverride()
    .configureOutput({ outputError: (message, write) => write(`work-graph: ${message.replace(/^error: /, "")}`) })
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError("run `work-graph help` for the commands");
  leaseCommands(program, sink);
  attentionCommands(program, sink);
  itemCommands(program, sink);
  importCommands(program, sink);
  policyCommands(program, sink);
  tokenCommands(program, sink);
  workerCommands(program, sink);
  agentCommands(program, sink);
  githubCommands(program, sink);
  for (const command of leafCommands(program)) command.showHelpAfterError(`usage: work-graph ${usageOf(command)}`);
  program.helpCommand("help [command]", "this help");
  program.helpInformation = () => helpText(program);
  return program;
}

function printError(error: WorkGraphError, json: boolean) {
  if (json) {
    process.stderr.write(`${JSON.stringify({ error: { reason: error.reason, code: error.code, message: error.message, detail: error.detail } })}\n`);
    return;
  }
  const kind = error.leaseKind ? ` (${error.leaseKind})` : "";
  const lines = [`work-graph: ${error.reason}${kind}: ${error.message}`];
  if (error.leaseKind === "revoked") lines.push(`An operator revoked it${error.detail.revokedBy ? ` (${String(error.detail.revokedBy)})` : ""}: ${String(error.detail.reason ?? "no reason given")}`);
  if (error.fenced) lines.push("Your lease on this item is gone: stop working on it and write nothing more about it. Claim again to continue.");
  if (error.drained) lines.push("An operator drained this worker: finish the leases you hold, claim nothing new.");
  if (error.reason === "UNAUTHENTICATED") lines.push("Check WORK_GRAPH_TOKEN / --token.");
  if (error.reason === "NETWORK") lines.push("Check WORK_GRAPH_URL / --url and that the server is running.");
  if (error.reason === "NOT_CLAIMABLE" && error.detail.stage) {
    const missing = Array.isArray(error.detail.missing) && error.detail.missing.length ? `; it requires ${error.detail.missing.join(", ")}, which this claim lacks` : "";
    const notBefore = typeof error.detail.notBefore === "string" ? ` until ${error.detail.notBefore}` : "";
    lines.push(`The item is ${String(error.detail.stage)}${notBefore}${missing}.`);
  }
  if (error.reason === "LIMIT_REACHED") {
    lines.push(`Concurrency key ${String(error.detail.key)} is full (${String(error.detail.liveLeases)} of ${String(error.detail.maxLeases)} live leases): claim other work, or wait.`);
  }
  process.stderr.write(`${lines.join("\n")}\n`);
}

export async function main(argv: string[]): Promise<number> {
  let output: Output | undefined;
  const program = createProgram((result) => (output = result));
  if (argv.length === 0) {
    process.stdout.write(program.helpInformation());
    return EXIT.OK;
  }
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (thrown) {
    // Help (exit 0), or a usage error commander or a command reported (already printed, with the usage line).
    if (thrown instanceof CommanderError) return thrown.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    const error = toWorkGraphError(thrown);
    printError(error, program.opts<{ json?: boolean }>().json ?? false);
    return error.reason === "INTERNAL" && !(thrown instanceof WorkGraphError) ? EXIT.UNEXPECTED : exitCodeFor(error.reason);
  }
  if (!output) return EXIT.OK;
  if (output.data !== undefined || output.human) {
    const json = program.opts<{ json?: boolean }>().json ?? false;
    process.stdout.write(json ? `${JSON.stringify(output.data, null, 2)}\n` : output.human ? `${output.human}\n` : "");
  }
  return output.code ?? EXIT.OK;
}
