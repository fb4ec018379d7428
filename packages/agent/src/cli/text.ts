import type { Command } from "commander";
import { workflow } from "../workflow";
import { EXIT_CODE_TABLE } from "./exit-codes";

/** `work-graph prime`: the whole workflow an AI agent needs, printed without contacting the server. */
export const PRIME = workflow("cli");

/** `claim [<item>] [--parent P] …`: the command's path and its usage as the command declares it. */
export function usageOf(command: Command): string {
  const path: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) path.unshift(at.name());
  const usage = command.usage();
  return usage === "[options]" ? path.join(" ") : `${path.join(" ")} ${usage}`;
}

/** Every command that runs something, group members included ("attention request"). */
export function leafCommands(command: Command): Command[] {
  return command.commands.flatMap((child) => (child.commands.length ? leafCommands(child) : [child]));
}

/** `work-graph help`: every command with its usage and what it does, then the rules every command shares. */
export function helpText(program: Command): string {
  const commands = [...leafCommands(program).map((command) => ({ usage: usageOf(command), summary: command.description() })),
    { usage: "help [command]", summary: "this help; `work-graph <command> --help` lists a command's options" }]
    .map((command) => `  ${command.usage}\n      ${command.summary}`)
    .join("\n");
  return `work-graph - command line client for the Work Graph API

Usage: work-graph <command> [arguments] [--url URL] [--token TOKEN] [--json]

Commands:
${commands}

Global options:
  --url URL           server base URL (default: $WORK_GRAPH_URL, else http://localhost:3000)
  --token TOKEN       bearer token (default: $WORK_GRAPH_TOKEN)
  --json              machine-readable output: the API's JSON on stdout; errors as
                      {"error":{reason,code,message,detail}} on stderr
Item commands also take:
  --lease-id ID       use this lease instead of the remembered one
  --epoch N           with --lease-id (looked up when omitted)
  --key K             idempotency key for claim, note, decompose, attention request/resolve, create, depend

Item commands (renew, note, release, cancel, hand-back, decompose, attention request) find your lease
themselves: the last claim this session (its state file, $WORK_GRAPH_STATE, default
~/.work-graph/cli-state.json) made with this token on that item. Without one they refuse
(exit 5): claim first. A lease the server fenced stays refused until you claim again.
An option a command does not take is an error (exit 2).

Queue policy: claim and queue take only items whose requires are among your capabilities
(--capability C, repeatable; default: your token's). --project P (default $WORK_GRAPH_PROJECT)
narrows claim, queue and create to one project. Give an item back you cannot do with
hand-back (it goes to another worker at once, or after --retry-after S); ask a person
(attention request) when someone must decide or grant something.

${EXIT_CODE_TABLE}
`;
}
