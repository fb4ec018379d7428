/** `work-graph tokens …` (admin): mint, list and revoke API tokens. */
import type { Command } from "commander";
import { ROLES, type Role } from "@work-graph/contract";
import { action, collectNames, required, UsageError, type Sink } from "../context";
import { table } from "../format";

export function tokenCommands(program: Command, sink: Sink) {
  const tokens = program.command("tokens").description("API tokens (admin)");

  tokens.command("create")
    .description("mint a token (admin); shown once")
    .usage("--role agent|operator|admin [--worker-id W] [--label L] [--project P]… [--capability C]…")
    .option("--role <R>", "agent, operator or admin")
    .option("--worker-id <W>", "the worker an agent token acts as")
    .option("--label <L>", "a name to recognise it by")
    .option("--project <P>", "scope it to this project (repeatable or comma-separated; default: every project)", collectNames)
    .option("--capability <C>", "an agent token's capability: it claims items that require it (repeatable or comma-separated)", collectNames)
    .action(action(sink, async (context, options: { role?: string; workerId?: string; label?: string; project?: string[]; capability?: string[] }) => {
      const role = required(options.role, "--role");
      if (!(ROLES as readonly string[]).includes(role)) throw new UsageError("--role must be agent, operator or admin");
      const result = await context.client().tokens.create.mutate({
        role: role as Role, workerId: options.workerId, label: options.label, projects: options.project, capabilities: options.capability,
      });
      return { data: result, human: `${result.token}\n(token id ${result.id}; the secret above is shown only once - keep it)` };
    }));

  tokens.command("list")
    .description("tokens without their secrets (admin)")
    .action(action(sink, async (context) => {
      const list = await context.client().tokens.list.query();
      const human = table(list.map((token) => [
        token.id, token.role, token.workerId ?? "-", token.label ?? "-", // A server before v3 sends neither list.
        token.projects?.join(",") || "all", token.capabilities?.join(",") || "-",
        token.createdAt, token.lastUsedAt ?? "never", token.revokedAt ? `revoked ${token.revokedAt}` : "active",
      ]), ["id", "role", "worker", "label", "projects", "capabilities", "created", "last used", "state"]);
      return { data: list, human };
    }));

  tokens.command("revoke")
    .description("revoke a token (admin)")
    .usage("<id>")
    .argument("<id>")
    .action(action(sink, async (context, _options: object, id: string) => {
      const result = await context.client().tokens.revoke.mutate({ id });
      return { data: result, human: `Revoked token ${result.id} at ${result.revokedAt}.` };
    }));
}
