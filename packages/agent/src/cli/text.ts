import { workflow } from "../workflow";
import { EXIT_CODE_TABLE } from "./exit-codes";

/** `work-graph prime`: the whole workflow an AI agent needs, printed without contacting the server. */
export const PRIME = workflow("cli");

export const COMMAND_HELP: Record<string, { usage: string; summary: string }> = {
  queue: { usage: "queue [--limit N] [--worker-id W]", summary: "ready items in the order a next claim takes them" },
  claim: {
    usage: "claim [<item>] [--parent P] [--duration S] [--wait S] [--key K]",
    summary: "claim the next ready item (or <item>, or the next child of P); --wait S: wait up to S seconds for one; remembers the lease",
  },
  renew: { usage: "renew <item> [--duration S]", summary: "renew your lease on <item> (new expiry = server now + S, default 900)" },
  note: { usage: "note <item> <text…|->", summary: "add a progress note (- reads the text from stdin)" },
  release: { usage: "release <item> --evidence E [--link URL]…", summary: "finish <item>: it becomes released" },
  cancel: { usage: "cancel <item> --reason R", summary: "cancel <item> (and its open descendants) with your lease" },
  decompose: {
    usage: "decompose <item> --children-json JSON|@file|- [--claim-child ID] [--duration S]",
    summary: "split <item> into children [{id?, title, description?, priority?, dependsOn?}]; your lease ends",
  },
  "attention request": {
    usage: "attention request <item> --kind K --question Q [--option O]… [--context C] [--non-blocking]",
    summary: "ask a human (kind: decision|authority|access|review|help|scope); blocking ends your lease",
  },
  "attention list": { usage: "attention list [--status open|resolved|all] [--item X] [--limit N]", summary: "attention requests (open by default, oldest first)" },
  "attention show": { usage: "attention show <id>", summary: "one attention request" },
  "attention wait": { usage: "attention wait <id> [--timeout S]", summary: "wait until the request is answered (default up to 3600 s; exit 10 if not) and print the answer" },
  "attention resolve": { usage: "attention resolve <id> --resolution R", summary: "answer an attention request (operator)" },
  show: { usage: "show <item>", summary: "a work item: stage, lease, dependencies, notes" },
  history: { usage: "history <item>", summary: "all leases of <item>, in epoch order" },
  events: { usage: "events [--item X] [--after N] [--limit N] [--follow]", summary: "the event log (--follow keeps tailing)" },
  create: {
    usage: "create --title T [--id ID] [--parent P] [--depends-on D]… [--priority N] [--description TEXT]",
    summary: "create a work item",
  },
  depend: { usage: "depend <item> <on> [--remove]", summary: "make <item> wait for <on> (or remove that dependency)" },
  "tokens create": { usage: "tokens create --role agent|operator|admin [--worker-id W] [--label L]", summary: "mint a token (admin); shown once" },
  "tokens list": { usage: "tokens list", summary: "tokens without their secrets (admin)" },
  "tokens revoke": { usage: "tokens revoke <id>", summary: "revoke a token (admin)" },
  revoke: {
    usage: "revoke <item> --reason R [--lease-id ID [--epoch N]]",
    summary: "end the live lease on <item> now (operator); its worker is fenced (exit 5) and the item is ready again",
  },
  workers: { usage: "workers", summary: "every worker: live leases, last seen, last-hour counts, drained state" },
  drain: { usage: "drain <worker> [--reason R]", summary: "stop <worker> claiming (operator); its claims then exit 9, its leases carry on" },
  undrain: { usage: "undrain <worker>", summary: "let a drained worker claim again (operator)" },
  health: { usage: "health", summary: "check the server and its database (no token needed)" },
  prime: { usage: "prime", summary: "print the agent workflow (offline)" },
  mcp: { usage: "mcp", summary: "serve the API to a coding agent as an MCP server on stdio (see docs/agents.md)" },
  help: { usage: "help [command]", summary: "this help" },
};

export function helpText(): string {
  const commands = Object.values(COMMAND_HELP)
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
  --lease-id ID       for item commands: use this lease instead of the remembered one
  --epoch N           with --lease-id (looked up when omitted)
  --key K             idempotency key for claim, note, decompose, attention request/resolve, create, depend

Item commands (renew, note, release, cancel, decompose, attention request) find your lease
themselves: the last claim this session (its state file, $WORK_GRAPH_STATE, default
~/.work-graph/cli-state.json) made with this token on that item. Without one they refuse
(exit 5): claim first. A lease the server fenced stays refused until you claim again.
Option values starting with "-" need "=": --priority=-5.

${EXIT_CODE_TABLE}
`;
}
