import { verify } from "@octokit/webhooks-methods";
import { githubSettings, maxBodyBytes } from "../../config";
import { isDatabaseUnavailable } from "../../database/availability";
import type { Db } from "../../db";
import { WorkGraphError } from "../../errors";
import { logger } from "../../log";
import { applyIssueEvent } from "./operations";
import { githubDeliverySeen, recordGithubDelivery } from "./statements";
import type { ApiResponse } from "../../trpc/http";
import { issuesPayload } from "./issue";

/** A webhook request as both servers give it: its headers and a bounded read of its raw body. */
export interface GithubWebhookRequest {
  method: string;
  headers: { get(name: string): string | null };
  readBody(limit: number): Promise<Buffer | null>;
}

const answer = (status: number, body: Record<string, unknown> | null): ApiResponse => ({
  status,
  headers: body ? { "content-type": "application/json", "cache-control": "no-store" } : { "cache-control": "no-store" },
  body: body ? JSON.stringify(body) : null,
});

/** The JSON payload of a delivery, whichever content type the webhook was created with. */
function payloadText(raw: string, contentType: string | null): string {
  if (contentType?.startsWith("application/x-www-form-urlencoded")) return new URLSearchParams(raw).get("payload") ?? "";
  return raw;
}

/**
 * `POST /api/integrations/github/webhook` (docs/github.md): verifies X-Hub-Signature-256
 * (@octokit/webhooks-methods) against WORK_GRAPH_GITHUB_WEBHOOK_SECRET before anything else
 * (401 otherwise, nothing changes), handles each X-GitHub-Delivery once (a redelivery answers
 * 200 `duplicate`), applies `issues` events and answers 204 to every other event type. The
 * delivery is recorded after its effects, so a failure (500/503) is retried by a GitHub
 * redelivery; the effects themselves are idempotent (externalId, same field values).
 */
export async function handleGithubWebhook(db: Db, request: GithubWebhookRequest): Promise<ApiResponse> {
  const settings = githubSettings();
  if (!settings.webhookSecret) return answer(404, { reason: "NOT_FOUND", message: "GitHub issues in is off: set WORK_GRAPH_GITHUB_WEBHOOK_SECRET" });
  if (request.method !== "POST") return answer(405, { reason: "VALIDATION", message: "use POST" });
  const body = await request.readBody(maxBodyBytes());
  if (body === null) return answer(413, { reason: "TOO_LARGE", message: "the delivery is larger than WORK_GRAPH_MAX_BODY_BYTES" });
  const raw = body.toString("utf8");
  const signature = request.headers.get("x-hub-signature-256");
  if (!signature || raw === "" || !(await verify(settings.webhookSecret, raw, signature))) {
    return answer(401, { reason: "UNAUTHENTICATED", message: "X-Hub-Signature-256 does not match the webhook secret" });
  }
  const event = request.headers.get("x-github-event") ?? "";
  const deliveryId = request.headers.get("x-github-delivery") ?? "";
  if (!/^[A-Za-z0-9-]{1,100}$/.test(deliveryId)) return answer(400, { reason: "VALIDATION", message: "X-GitHub-Delivery is missing or malformed" });
  if (event === "ping") return answer(200, { ok: true, event });
  if (event !== "issues") return answer(204, null);

  let json: unknown;
  try {
    json = JSON.parse(payloadText(raw, request.headers.get("content-type")));
  } catch {
    return answer(400, { reason: "VALIDATION", message: "the payload is not JSON" });
  }
  const parsed = issuesPayload.safeParse(json);
  if (!parsed.success) return answer(400, { reason: "VALIDATION", message: "not an issues event payload" });
  try {
    if (await githubDeliverySeen(db, deliveryId)) return answer(200, { ok: true, duplicate: true });
    const outcome = await applyIssueEvent(db, { label: settings.label, projects: settings.projects }, parsed.data);
    await recordGithubDelivery(db, { id: deliveryId, event, action: parsed.data.action });
    return answer(200, { ok: true, ...outcome });
  } catch (error) {
    // A refusal (e.g. a mapped project that does not exist): GitHub shows it on the delivery, and a redelivery after the fix applies it.
    if (error instanceof WorkGraphError) return answer(422, { reason: error.reason, message: error.message });
    if (isDatabaseUnavailable(error)) return answer(503, { reason: "UNAVAILABLE", message: "the database cannot be reached right now; GitHub can redeliver" });
    logger().error({ err: error, deliveryId }, "GitHub delivery failed");
    return answer(500, { reason: "INTERNAL", message: "the delivery failed inside Work Graph (see the server log); GitHub can redeliver" });
  }
}
