import { createHmac, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import examples from "@octokit/webhooks-examples/api.github.com/index.json" with { type: "json" };
import { vi } from "vitest";
import { databaseTest } from "../support/fixtures";

export const SECRET = "it's a secret to everybody";
export const TOKEN = "ghp_test_token_for_the_fake_api";
export const REPO = "Codertocat/Hello-World";

/** Settings every test of these files runs with (put back after each test by vitest's unstubEnvs). */
export function githubEnv(apiUrl?: string) {
  vi.stubEnv("WORK_GRAPH_GITHUB_WEBHOOK_SECRET", SECRET);
  vi.stubEnv("WORK_GRAPH_GITHUB_PROJECTS", "codertocat/mapped-repo=mapped");
  if (apiUrl) {
    vi.stubEnv("WORK_GRAPH_GITHUB_TOKEN", TOKEN);
    vi.stubEnv("WORK_GRAPH_GITHUB_API_URL", apiUrl);
  }
}

interface Call {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  body: Record<string, unknown> | null;
  status?: number;
}

export interface FakeIssue {
  number: number;
  title: string;
  body: string | null;
  labels: { name: string }[];
  pull_request?: object;
}

/**
 * A fake of GitHub's REST API on 127.0.0.1 that @octokit/rest really talks to: issue comments
 * (POST …/issues/N/comments), issue updates (PATCH …/issues/N) and the issue list (GET
 * …/issues, paged with a Link header like GitHub's). Every call is recorded; `down` answers 503.
 */
export async function startFakeGithub() {
  const calls: Call[] = [];
  const issues = new Map<string, FakeIssue[]>();
  let down = false;
  let failingPatches = 0;
  let nextCommentId = 1000;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://fake");
      const text = Buffer.concat(chunks).toString("utf8");
      const call: Call = { method: req.method ?? "", path: url.pathname, query: url.searchParams, authorization: req.headers.authorization, body: text ? JSON.parse(text) : null };
      calls.push(call);
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        call.status = status;
        res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
        res.end(JSON.stringify(body));
      };
      if (down) return send(503, { message: "Service Unavailable" });
      // Octokit sends `token <T>`, the CLI `Bearer <T>`: GitHub takes both.
      if (req.headers.authorization !== `token ${TOKEN}` && req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, { message: "Bad credentials" });
      let match = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/.exec(url.pathname);
      if (match && req.method === "POST") return send(201, { id: nextCommentId++, body: JSON.parse(text).body });
      match = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)$/.exec(url.pathname);
      if (match && req.method === "PATCH" && failingPatches > 0) {
        failingPatches--;
        return send(502, { message: "Bad Gateway" });
      }
      if (match && req.method === "PATCH") return send(200, { number: Number(match[3]), ...JSON.parse(text) });
      match = /^\/repos\/([^/]+)\/([^/]+)\/issues$/.exec(url.pathname);
      if (match && req.method === "GET") {
        const wanted = url.searchParams.get("labels");
        const all = (issues.get(`${match[1]}/${match[2]}`) ?? []).filter((issue) => !wanted || issue.labels.some((l) => l.name === wanted));
        const perPage = Number(url.searchParams.get("per_page") ?? 30);
        const page = Number(url.searchParams.get("page") ?? 1);
        const last = Math.max(1, Math.ceil(all.length / perPage));
        const link = (n: number) => {
          const next = new URL(url.href.replace("http://fake", `http://127.0.0.1:${(server.address() as AddressInfo).port}`));
          next.searchParams.set("page", String(n));
          return next.href;
        };
        const headers: Record<string, string> = {};
        if (page < last) headers.link = `<${link(page + 1)}>; rel="next", <${link(last)}>; rel="last"`;
        return send(200, all.slice((page - 1) * perPage, page * perPage), headers);
      }
      send(404, { message: "Not Found" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    calls,
    setDown(value: boolean) {
      down = value;
    },
    /** The next `n` issue updates fail with 502. */
    failPatches(n: number) {
      failingPatches = n;
    },
    setIssues(repository: string, list: FakeIssue[]) {
      issues.set(repository, list);
    },
    /** The comments posted (answered 201) on an issue, in arrival order. */
    commentsOn: (repository: string, issueNumber: number) =>
      calls.filter((c) => c.method === "POST" && c.path === `/repos/${repository}/issues/${issueNumber}/comments` && c.status === 201).map((c) => String(c.body?.body)),
    /** The issue updates GitHub accepted (200). */
    updatesOf: (repository: string, issueNumber: number) =>
      calls.filter((c) => c.method === "PATCH" && c.path === `/repos/${repository}/issues/${issueNumber}` && c.status === 200).map((c) => c.body),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type FakeGithub = Awaited<ReturnType<typeof startFakeGithub>>;

const openedExample = examples.find((e) => e.name === "issues")!.examples.find((e) => (e as { action: string }).action === "opened")! as unknown as Record<string, unknown> & {
  issue: Record<string, unknown>;
  repository: Record<string, unknown>;
  sender: Record<string, unknown>;
};

/** A real `issues` payload (GitHub's documented example) with this issue's fields. */
export function issuesPayload(action: string, issue: { number: number; title?: string; body?: string | null; labels?: string[]; repo?: string; sender?: string; label?: string }) {
  const repo = issue.repo ?? REPO;
  const labels = (issue.labels ?? ["work-graph"]).map((name, index) => ({ id: index + 1, name, color: "ededed", default: false }));
  return {
    ...openedExample,
    action,
    issue: { ...openedExample.issue, number: issue.number, title: issue.title ?? `Issue ${issue.number}`, body: issue.body ?? null, labels, state: action === "closed" ? "closed" : "open" },
    ...(issue.label ? { label: { id: 99, name: issue.label, color: "ededed", default: false } } : {}),
    repository: { ...openedExample.repository, full_name: repo, name: repo.split("/")[1] },
    sender: { ...openedExample.sender, login: issue.sender ?? "Codertocat" },
  };
}

/** Signs a body exactly as GitHub does: X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>. */
export const signature = (secret: string, body: string) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

/** POSTs one delivery to the webhook endpoint of `baseUrl`, signed with `secret` unless told otherwise. */
export async function deliver(baseUrl: string, event: string, payload: unknown, options: { deliveryId?: string; secret?: string; signature?: string } = {}) {
  const body = JSON.stringify(payload);
  const deliveryId = options.deliveryId ?? randomUUID();
  const response = await fetch(`${baseUrl}/api/integrations/github/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "user-agent": "GitHub-Hookshot/test",
      "x-github-event": event,
      "x-github-delivery": deliveryId,
      "x-github-hook-id": "1",
      "x-hub-signature-256": options.signature ?? signature(options.secret ?? SECRET, body),
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null, deliveryId };
}

export const githubTest = databaseTest();
