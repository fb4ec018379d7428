import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slackSignature, startFakeSlack, type FakeSlack } from "../slack/fake-slack";
import { admin, agentClient, baseURL, DESKTOP, launchBrowser, newToken, required, run, seriousViolations } from "./support";

/*
 * Issue 28 end to end on the app as `npm start` runs it: scripts/browser-tests.mjs starts it
 * with the Slack app on and its Web API pointed at the fake served here; a click in Slack is a
 * signed interaction; the Webhooks page shows the Slack app's deliveries.
 */

let browser: Browser;
let slack: FakeSlack;

beforeAll(async () => {
  browser = await launchBrowser();
  slack = await startFakeSlack(required("WG_SLACK_BOT_TOKEN"), Number(required("WG_FAKE_SLACK_PORT")));
});
afterAll(async () => {
  await browser?.close();
  await slack?.close();
});

describe("the Slack app", () => {
  it("posts a request, a click in Slack answers it, the message is updated, and the Webhooks page lists the deliveries", async () => {
    const itemId = `slack-${run}`;
    const agent = await agentClient(`slack-agent-${run}`);
    await admin.workItems.create.mutate({ id: itemId, title: "Release train" });
    const claimed = await agent.leases.claim.mutate({ workItemId: itemId });
    const { request } = await agent.attention.request.mutate({
      leaseId: claimed!.lease.id, epoch: claimed!.lease.epoch, kind: "decision", question: `Ship the release? (${run})`, options: ["Approve", "Decline"],
    });
    const postOf = () => slack.of("chat.postMessage").find((call) => JSON.stringify(call.args.blocks ?? "").includes(request.id));
    await expect.poll(postOf, { timeout: 20_000 }).toBeTruthy();
    const buttons = (postOf()!.args.blocks as { type: string; elements?: { value?: string; action_id: string; text: { text: string } }[] }[])
      .flatMap((block) => (block.type === "actions" ? block.elements! : []));
    const approve = buttons.find((button) => button.text.text === "Approve")!;

    const body = new URLSearchParams({
      payload: JSON.stringify({
        type: "block_actions",
        user: { id: "U0BROWSER", name: "browser" },
        trigger_id: "trigger-1",
        channel: { id: "C0BROWSER" },
        actions: [{ type: "button", action_id: approve.action_id, value: approve.value, action_ts: `${Date.now() / 1000}` }],
      }),
    }).toString();
    const timestamp = Math.floor(Date.now() / 1000);
    const response = await fetch(`${baseURL}/api/integrations/slack/interactions`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-slack-request-timestamp": String(timestamp),
        "x-slack-signature": slackSignature(required("WG_SLACK_SIGNING_SECRET"), timestamp, body),
      },
      body,
    });
    expect(response.status).toBe(200);
    await expect.poll(async () => (await admin.attention.get.query({ id: request.id })).resolvedBy, { timeout: 15_000 }).toBe("slack:U0BROWSER");
    const updated = () => slack.of("chat.update").filter((call) => JSON.stringify(call.args.blocks).includes(`(${run})`));
    await expect.poll(() => updated().length, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(JSON.stringify(updated()[0]!.args.blocks)).toContain("Answered by <@U0BROWSER>:* Approve");

    const context = await browser.newContext({ baseURL, viewport: DESKTOP });
    const login = await context.request.post("/api/session", { data: { token: await newToken("admin") }, headers: { "x-work-graph-csrf": "1" } });
    expect(login.ok()).toBe(true);
    const page = await context.newPage();
    await page.goto("/webhooks");
    const row = page.locator("[data-webhook-id]").filter({ hasText: "Slack app → C0BROWSER" });
    await row.waitFor();
    expect(await row.textContent()).toContain("slack_app");
    await row.getByRole("button", { name: "Deliveries" }).click();
    const deliveries = page.locator('[data-testid="webhook-deliveries"] tr[data-status="delivered"]');
    await deliveries.filter({ hasText: "attention.requested" }).first().waitFor({ timeout: 15_000 });
    await deliveries.filter({ hasText: "attention.resolved" }).first().waitFor({ timeout: 15_000 });
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  });
});
