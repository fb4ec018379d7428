import { execFile } from "node:child_process";
import path from "node:path";
import { describe, expect } from "vitest";
import { callerAs } from "../support/app";
import { githubTest, REPO, startFakeGithub, TOKEN, type FakeIssue } from "./support";

/*
 * Issue 29, back-fill: `work-graph github import OWNER/REPO` pages through the fake GitHub's
 * issue list (per_page=100, Link rel="next") and imports the labelled open issues in one
 * workItems.import; a second run creates nothing.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "packages", "agent", "bin", "work-graph.js");

const it = githubTest.extend("github", { scope: "file" }, async ({}, { onCleanup }) => {
  const fake = await startFakeGithub();
  onCleanup(() => fake.close());
  return fake;
});

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: { NODE_ENV: "test", PATH: process.env.PATH, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

describe("work-graph github import", () => {
  it("imports 250 labelled issues over three pages in one call (task lists, depends on), and a re-run creates nothing", async ({ database, server, github, people }) => {
    const issues: FakeIssue[] = Array.from({ length: 260 }, (_, index) => ({
      number: index + 1,
      title: `Backlog issue ${index + 1}`,
      body: index === 1 ? "Depends on #1\n- [ ] first step\n- [ ] second step" : null,
      labels: index < 250 ? [{ name: "work-graph" }, ...(index === 0 ? [{ name: "requires:gpu" }] : [])] : [{ name: "other" }],
    }));
    issues.push({ number: 999, title: "A pull request", body: null, labels: [{ name: "work-graph" }], pull_request: {} });
    github.setIssues(REPO, issues);
    const { token } = await callerAs(database.instance, "operator");
    const env = { WORK_GRAPH_URL: server.url, WORK_GRAPH_TOKEN: token, GITHUB_TOKEN: TOKEN, GITHUB_API_URL: github.url };

    const first = await cli(["github", "import", REPO, "--json"], env);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const result = JSON.parse(first.stdout) as { created: { externalId: string }[]; existing: unknown[] };
    expect(result.created).toHaveLength(252);
    expect(result.existing).toEqual([]);
    const pages = github.calls.filter((call) => call.method === "GET");
    expect(pages).toHaveLength(3);
    expect(pages.every((call) => call.query.get("per_page") === "100" && call.query.get("labels") === "work-graph" && call.query.get("state") === "open")).toBe(true);

    const [one] = (await people.operator.workItems.list({ externalId: `github:${REPO}#1` })).items;
    const [two] = (await people.operator.workItems.list({ externalId: `github:${REPO}#2` })).items;
    expect(one).toMatchObject({ requires: ["gpu"], title: "Backlog issue 1" });
    expect(two).toMatchObject({ dependsOn: [one!.id], openChildCount: 2 });
    expect((await people.operator.workItems.list({ externalId: `github:${REPO}#999` })).items).toEqual([]);

    const again = await cli(["github", "import", REPO], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/Created 0 items from 250 issues of Codertocat\/Hello-World; 252 existed already/);
  });

  it("needs a GitHub token", async ({ server }) => {
    const run = await cli(["github", "import", REPO], { WORK_GRAPH_URL: server.url, WORK_GRAPH_TOKEN: "x" });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/GITHUB_TOKEN/);
  });
});
