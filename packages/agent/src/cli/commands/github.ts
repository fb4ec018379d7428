/** GitHub: back-fill a repository's labelled issues (docs/github.md "Back-fill"). */
import type { Command } from "commander";
import { githubBlockerNumbers, githubIssueImport, type GithubImportItem, type GithubIssue } from "@work-graph/contract";
import { action, UsageError, withProjectOption, type Sink } from "../context";
import { plural } from "../format";

/** Most items one workItems.import takes (docs/api.md "Import"). */
const MAX_IMPORT_ITEMS = 1000;

/** `Link: <…>; rel="next"` of a GitHub list page, if there is a next page. */
function nextPage(link: string | null): string | null {
  return /<([^>]+)>;\s*rel="next"/.exec(link ?? "")?.[1] ?? null;
}

/** The repository's open issues with `label`, every page (per_page=100), pull requests left out. */
async function openLabelledIssues(apiUrl: string, token: string, repository: string, label: string): Promise<GithubIssue[]> {
  const issues: GithubIssue[] = [];
  let url: string | null = `${apiUrl}/repos/${repository}/issues?${new URLSearchParams({ state: "open", labels: label, per_page: "100" })}`;
  while (url) {
    const response: Response = await fetch(url, {
      headers: { accept: "application/vnd.github+json", authorization: `Bearer ${token}`, "user-agent": "work-graph-cli", "x-github-api-version": "2022-11-28" },
      signal: AbortSignal.timeout(30_000),
    });
    if (!response.ok) throw new UsageError(`GitHub answered HTTP ${response.status} for ${repository}'s issues: ${(await response.text()).slice(0, 200)}`);
    const page = (await response.json()) as (GithubIssue & { pull_request?: unknown })[];
    issues.push(...page.filter((issue) => issue.pull_request === undefined));
    url = nextPage(response.headers.get("link"));
  }
  return issues;
}

/** One import for every issue: `depends on #N` becomes a dependency when #N is imported too. */
export function backfillItems(repository: string, issues: GithubIssue[]): GithubImportItem[] {
  const numbers = new Set(issues.map((issue) => issue.number));
  return issues.flatMap((issue) => githubIssueImport(
    repository,
    issue,
    githubBlockerNumbers(issue.body, issue.number).filter((n) => numbers.has(n)).map((n) => `#${n}`),
  ));
}

export function githubCommands(program: Command, sink: Sink) {
  const github = program.command("github").description("GitHub issues as work items (docs/github.md)");

  withProjectOption(github.command("import"), "import into this project (match WORK_GRAPH_GITHUB_PROJECTS on the server)")
    .description("import OWNER/REPO's open issues with the label (operator): one workItems.import, safe to run again; needs GITHUB_TOKEN")
    .usage("<owner/repo> [--label L] [--project P] [--dry-run]")
    .argument("<owner/repo>")
    .option("--label <L>", "the label that brings an issue in (default: work-graph)")
    .option("--dry-run", "check and show what would be created; write nothing")
    .action(action(sink, async (context, options: { label?: string; project?: string; dryRun?: boolean }, repository: string) => {
      if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repository)) throw new UsageError("the repository must be OWNER/REPO");
      const token = process.env.GITHUB_TOKEN || process.env.WORK_GRAPH_GITHUB_TOKEN;
      if (!token) throw new UsageError("no GitHub token: set GITHUB_TOKEN (read access to the repository's issues)");
      const apiUrl = (process.env.GITHUB_API_URL || process.env.WORK_GRAPH_GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, "");
      const issues = await openLabelledIssues(apiUrl, token, repository, options.label ?? "work-graph");
      if (issues.length === 0) return { data: { created: [], existing: [], refs: {} }, human: `No open issues with that label in ${repository}.` };
      const items = backfillItems(repository, issues);
      if (items.length > MAX_IMPORT_ITEMS) throw new UsageError(`${plural(items.length, "item")} (issues and their task lists) is more than one import takes (${MAX_IMPORT_ITEMS}); import with narrower labels`);
      const result = await context.client().workItems.import.mutate({ projectId: options.project ?? context.project, items, dryRun: options.dryRun ?? false });
      const verb = options.dryRun ? "Would create" : "Created";
      return { data: result, human: `${verb} ${plural(result.created.length, "item")} from ${plural(issues.length, "issue")} of ${repository}; ${result.existing.length} existed already.` };
    }));
}
