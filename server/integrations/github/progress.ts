import { Octokit } from "@octokit/rest";
import type { Db } from "../../db";
import { logger } from "../../log";
import { insertGithubComment, selectAttentionForGithub, selectGithubComment, selectGithubItem, upsertGithubWebhook } from "./statements";
import type { AttemptResult } from "../webhooks/statements";
import type { ClaimedDelivery } from "../webhooks/claim";
import type { OwnedWebhookDelivery } from "../webhooks/dispatcher";
import { itemUrl, newWebhookSecret, TEST_EVENT_TYPE } from "../webhooks/payload";
import { DELIVERY_TIMEOUT_MS } from "../webhooks/send";
import { encryptSecret } from "../webhooks/secret-box";
import { parseGithubIssueExternalId } from "@work-graph/contract";

/*
 * GitHub progress out (docs/github.md): the outbox's `github` webhook takes the events of items
 * that came from an issue, and each delivery writes one comment on that issue (and, for a
 * release, closes it) with @octokit/rest. Retries, at-least-once and one instance at a time
 * come from the outbox (server/integrations/webhooks); a comment already posted for a delivery is never
 * posted again (github_comments).
 */

/** The events that comment: a claim, a question and its answer, a lease's end (a release also closes the issue). */
export const GITHUB_EVENTS = ["lease.claimed", "attention.requested", "attention.resolved", "lease.ended"];

export interface GithubApi {
  apiUrl: string;
  octokit: Octokit;
}

export function githubApi(settings: { token: string; apiUrl: string }): GithubApi {
  // A failed call is recorded on its delivery (and retried); Octokit's own console lines would repeat it.
  const log = {
    debug: (message: string) => logger().trace({ github: message }),
    info: (message: string) => logger().debug({ github: message }),
    warn: (message: string) => logger().warn({ github: message }),
    error: (message: string) => logger().debug({ github: message }),
  };
  return { apiUrl: settings.apiUrl, octokit: new Octokit({ auth: settings.token, baseUrl: settings.apiUrl, userAgent: "work-graph", log }) };
}

/** Creates (or updates) the `github` outbox webhook; its secret is never used (nothing is signed for GitHub's API) but every webhook has one. */
export function syncGithubWebhook(db: Db, api: GithubApi): Promise<string> {
  return upsertGithubWebhook(db, { url: api.apiUrl, events: GITHUB_EVENTS, secretCiphertext: encryptSecret(newWebhookSecret()) });
}

const ok = (responseBody: string): AttemptResult => ({ ok: true, responseStatus: 200, responseBody, error: null });
const failed = (error: string, responseStatus: number | null = null): AttemptResult => ({ ok: false, responseStatus, responseBody: null, error: error.slice(0, 300) });

const quote = (text: string) => text.trim().split(/\r?\n/).map((line) => `> ${line}`).join("\n");
const PULL_REQUEST = /^https:\/\/[^/\s]+\/[^/\s]+\/[^/\s]+\/pull\/\d+\b/;

/** The comment a delivery writes, or null when its event says nothing on GitHub (and whether it closes the issue). */
async function commentFor(db: Db, delivery: ClaimedDelivery, publicUrl: string): Promise<{ body: string; close: boolean } | null> {
  const { event } = delivery;
  const data = event.data as Record<string, unknown>;
  const link = itemUrl(publicUrl, event.workItemId);
  const footer = `\n\n— [Work Graph item ${event.workItemId}](${link})`;
  switch (event.type) {
    case "lease.claimed":
      return { body: `🔒 Claimed by **${event.actor}** (lease epoch ${event.epoch ?? "?"}).${footer}`, close: false };
    case "attention.requested": {
      const request = typeof data.requestId === "string" ? await selectAttentionForGithub(db, data.requestId) : undefined;
      const kind = typeof data.kind === "string" ? ` (${data.kind})` : "";
      const question = request ? `\n\n${quote(request.question)}` : "";
      return { body: `🙋 **${event.actor}** asks${kind}${data.blocking === false ? "" : ", and waits for the answer"}:${question}\n\nAnswer it in Work Graph: ${link}${footer}`, close: false };
    }
    case "attention.resolved": {
      const resolution = typeof data.resolution === "string" ? data.resolution : (typeof data.requestId === "string" ? (await selectAttentionForGithub(db, data.requestId))?.resolution : null);
      return { body: `✅ Answered by **${event.actor}**:${resolution ? `\n\n${quote(resolution)}` : " (resolved)"}${footer}`, close: false };
    }
    case "lease.ended": {
      if (data.outcome !== "released") return null;
      const links = Array.isArray(data.links) ? data.links.filter((entry): entry is string => typeof entry === "string") : [];
      const pullRequests = links.filter((entry) => PULL_REQUEST.test(entry));
      const evidence = typeof data.evidence === "string" ? `\n\n${quote(data.evidence)}` : "";
      const pr = pullRequests.length > 0 ? `\n\nPull request: ${pullRequests.join(", ")}` : "";
      const others = links.filter((entry) => !pullRequests.includes(entry));
      const linkList = others.length > 0 ? `\n\nLinks:\n${others.map((entry) => `- ${entry}`).join("\n")}` : "";
      return { body: `🎉 Released by **${String(data.workerId ?? event.actor)}** with this evidence:${evidence}${pr}${linkList}${footer}`, close: true };
    }
    default:
      return null;
  }
}

/** An Octokit failure as the deliveries view shows it. Octokit reports a network failure as status 500 without a response. */
function apiError(error: unknown): AttemptResult {
  const { status, response, cause } = error as { status?: unknown; response?: unknown; cause?: { name?: string; code?: string; cause?: { code?: string } } };
  if (typeof status === "number" && response !== undefined) return failed(`GitHub answered HTTP ${status}`, status);
  if (cause?.name === "TimeoutError" || cause?.name === "AbortError") return failed(`no answer from GitHub within ${DELIVERY_TIMEOUT_MS / 1000} s`);
  return failed(`could not reach GitHub: ${cause?.cause?.code ?? cause?.code ?? (error instanceof Error ? error.message : String(error))}`);
}

/**
 * One outbox delivery of the `github` webhook: the comment (once per delivery, even when a
 * later step failed and the delivery is retried), then for a release the issue is closed
 * (closing a closed issue changes nothing). Never throws: a failure is recorded and retried.
 */
async function attemptGithubDelivery(db: Db, api: GithubApi | null, delivery: ClaimedDelivery, publicUrl: string): Promise<AttemptResult> {
  if (!api) return failed("GitHub progress out is not configured on this instance (WORK_GRAPH_GITHUB_TOKEN)");
  if (delivery.event.type === TEST_EVENT_TYPE) return ok("test delivery: nothing is posted to GitHub");
  try {
    const item = await selectGithubItem(db, delivery.event.workItemId);
    const issue = parseGithubIssueExternalId(item?.externalId ?? null);
    if (!issue) return ok("not a GitHub issue's item: nothing to post");
    const comment = await commentFor(db, delivery, publicUrl);
    if (!comment) return ok(`nothing to post for ${delivery.event.type}`);
    const [owner, repo] = issue.repository.split("/") as [string, string];
    const target = { owner, repo, issue_number: issue.issueNumber, request: { signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS) } };
    let posted = await selectGithubComment(db, delivery.id);
    if (posted === undefined) {
      const created = await api.octokit.rest.issues.createComment({ ...target, body: comment.body });
      await insertGithubComment(db, delivery.id, created.data.id);
      posted = BigInt(created.data.id);
    }
    if (!comment.close) return ok(`commented: ${posted}`);
    await api.octokit.rest.issues.update({ ...target, state: "closed", state_reason: "completed" });
    return ok(`commented: ${posted}; issue closed`);
  } catch (error) {
    if (typeof (error as { status?: unknown }).status !== "number") {
      logger().error({ err: error }, "GitHub delivery failed");
      return failed("the delivery failed inside Work Graph (see the server log)");
    }
    return apiError(error);
  }
}

/** How the dispatcher delivers the `github` webhook (DispatcherOptions.owned); `api` null: progress out is not configured on this instance. */
export const githubDelivery = (db: Db, api: GithubApi | null, publicUrl: string): OwnedWebhookDelivery => (delivery) => attemptGithubDelivery(db, api, delivery, publicUrl);
