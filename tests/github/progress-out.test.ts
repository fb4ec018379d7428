import { describe, expect } from "vitest";
import { githubApiSettings } from "../../server/config";
import { githubApi, githubDelivery, syncGithubWebhook } from "../../server/integrations/github/progress";
import { startWebhookDispatcher } from "../../server/integrations/webhooks/dispatcher";
import { githubEnv, githubTest, REPO, startFakeGithub } from "./support";

/*
 * Issue 29, progress out: the real @octokit/rest writes comments and closes issues on a fake of
 * GitHub's REST API, through the webhook outbox (retried, at least once, recorded as deliveries).
 */

const PUBLIC_URL = "http://work-graph.test";

const it = githubTest
  .extend("github", { scope: "file" }, async ({}, { onCleanup }) => {
    const fake = await startFakeGithub();
    onCleanup(() => fake.close());
    return fake;
  })
  .extend("githubWebhookId", { scope: "file" }, async ({ database, github }, { onCleanup }) => {
    githubEnv(github.url);
    const api = githubApi(githubApiSettings()!);
    const webhookId = await syncGithubWebhook(database.db, api);
    const errors: unknown[] = [];
    const dispatcher = startWebhookDispatcher(database.db, { publicUrl: PUBLIC_URL, owned: { github: githubDelivery(database.db, api, PUBLIC_URL) }, pollIntervalMs: 100, onError: (error) => errors.push(error) });
    onCleanup(async () => {
      await dispatcher.stop();
      expect(errors).toEqual([]);
    });
    return webhookId;
  });

const issueItem = async (people: { operator: { workItems: { create: (input: { title: string; externalId: string }) => Promise<{ id: string }> } } }, n: number) =>
  people.operator.workItems.create({ title: `Issue ${n}`, externalId: `github:${REPO}#${n}` });

describe("GitHub progress out", () => {
  it("comments on claim (who, epoch), question (with its link), answer and release (evidence, PR called out), then closes the issue", async ({ people, github, githubWebhookId }) => {
    const item = await issueItem(people, 31);
    const agent = await people.agent("w-31");
    const first = (await agent.leases.claim({ workItemId: item.id }))!.lease;
    await expect.poll(() => github.commentsOn(REPO, 31).length).toBe(1);
    expect(github.commentsOn(REPO, 31)[0]).toMatch(/Claimed by \*\*w-31\*\* \(lease epoch 1\)/);

    const { request } = await agent.attention.request({ leaseId: first.id, epoch: first.epoch, kind: "decision", question: "Postgres or SQLite?" });
    await expect.poll(() => github.commentsOn(REPO, 31).length).toBe(2);
    expect(github.commentsOn(REPO, 31)[1]).toContain("> Postgres or SQLite?");
    expect(github.commentsOn(REPO, 31)[1]).toContain(`${PUBLIC_URL}/items/${item.id}`);

    await people.operator.attention.resolve({ id: request.id, resolution: "Postgres" });
    await expect.poll(() => github.commentsOn(REPO, 31).length).toBe(3);
    expect(github.commentsOn(REPO, 31)[2]).toMatch(/Answered by .*\n\n> Postgres/);

    const second = (await agent.leases.claim({ workItemId: item.id }))!.lease;
    await expect.poll(() => github.commentsOn(REPO, 31).length).toBe(4);
    expect(github.commentsOn(REPO, 31)[3]).toMatch(/lease epoch 2/);
    await agent.leases.release({ leaseId: second.id, epoch: second.epoch, evidence: "All tests pass.", links: ["https://github.com/Codertocat/Hello-World/pull/7", "https://ci.example/run/1"] });
    await expect.poll(() => github.updatesOf(REPO, 31)).toEqual([{ state: "closed", state_reason: "completed" }]);
    const released = github.commentsOn(REPO, 31)[4]!;
    expect(released).toContain("> All tests pass.");
    expect(released).toContain("Pull request: https://github.com/Codertocat/Hello-World/pull/7");
    expect(released).toContain("- https://ci.example/run/1");
    expect(github.calls.every((call) => call.authorization === "token ghp_test_token_for_the_fake_api")).toBe(true);

    const deliveries = await people.admin.webhooks.deliveries({ webhookId: githubWebhookId });
    expect(deliveries.filter((d) => d.status === "delivered").map((d) => d.eventType).sort()).toEqual(
      expect.arrayContaining(["attention.requested", "attention.resolved", "lease.claimed", "lease.claimed", "lease.ended"]),
    );
  });

  it("queues nothing for items that did not come from a GitHub issue", async ({ people, githubWebhookId, sql }) => {
    const item = await people.operator.workItems.create({ title: "local only" });
    const agent = await people.agent("w-32");
    await agent.leases.claim({ workItemId: item.id });
    const { rows } = await sql.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN events e ON e.sequence = d.event_sequence WHERE d.webhook_id = $1 AND e.work_item_id = $2`,
      [githubWebhookId, item.id],
    );
    expect(rows[0].n).toBe(0);
  });

  it("while GitHub's API is down the comment is retried; once it is back it is posted once", async ({ people, github, githubWebhookId }) => {
    const item = await issueItem(people, 33);
    github.setDown(true);
    const agent = await people.agent("w-33");
    await agent.leases.claim({ workItemId: item.id });
    const claimDelivery = async () =>
      (await people.admin.webhooks.deliveries({ webhookId: githubWebhookId })).find((d) => d.eventType === "lease.claimed" && d.status !== "delivered");
    await expect.poll(async () => (await claimDelivery())?.attempts ?? 0, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    expect(await claimDelivery()).toMatchObject({ status: "pending", error: "GitHub answered HTTP 503", responseStatus: 503 });
    expect(github.commentsOn(REPO, 33)).toEqual([]);
    github.setDown(false);
    await expect.poll(() => github.commentsOn(REPO, 33).length, { timeout: 30_000 }).toBe(1);
    await expect.poll(async () => await claimDelivery()).toBeUndefined();
    expect(github.commentsOn(REPO, 33)).toHaveLength(1);
  });

  it("a release whose close failed is retried without posting its comment again", async ({ people, github }) => {
    const item = await issueItem(people, 34);
    const agent = await people.agent("w-34");
    const { lease } = (await agent.leases.claim({ workItemId: item.id }))!;
    await expect.poll(() => github.commentsOn(REPO, 34).length).toBe(1);
    github.failPatches(1);
    await agent.leases.release({ leaseId: lease.id, epoch: lease.epoch, evidence: "shipped" });
    await expect.poll(() => github.updatesOf(REPO, 34).length, { timeout: 30_000 }).toBe(1);
    expect(github.commentsOn(REPO, 34).filter((body) => body.includes("Released"))).toHaveLength(1);
  });
});
