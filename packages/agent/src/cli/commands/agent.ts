/** Connecting an agent: the workflow it follows (`prime`, offline), the MCP server, and a health check of the server. */
import type { Command } from "commander";
import { apiUrl } from "../../sdk/client";
import { action, withCapabilityOption, withProjectOption, type Sink } from "../context";
import { PRIME } from "../text";

export function agentCommands(program: Command, sink: Sink) {
  program.command("health")
    .description("check the server and its database (no token needed)")
    .action(action(sink, async (context) => {
      const result = await context.client({ tokenOptional: true }).health.check.query();
      return { data: result, human: `ok: database ${result.database}, server time ${result.now} (${apiUrl(context.url)})` };
    }));

  program.command("prime")
    .description("print the agent workflow (offline)")
    .action(() => {
      process.stdout.write(PRIME);
    });

  withCapabilityOption(withProjectOption(program.command("mcp"), "the session's project for queue, claim and create"))
    .description("serve the API to a coding agent as an MCP server on stdio (see docs/agents.md)")
    .usage("[--project P] [--capability C]…")
    .action(action(sink, async (context, options: { project?: string; capability?: string[] }) => {
      const { serveMcp } = await import("../../mcp/server"); // loaded only here: other commands start faster
      await serveMcp({ client: context.client(), projectId: options.project ?? context.project, capabilities: options.capability });
      return { data: undefined, human: "" };
    }));
}
