import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, agentClient, baseURL, DESKTOP, launchBrowser, newToken, operatorContext, run, seriousViolations } from "./support";

let browser: Browser;
let receiver: http.Server;
let receiverUrl: string;
const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200).end("received");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook-${run}`;
});
afterAll(async () => {
  await browser?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function adminContext(): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL, viewport: DESKTOP });
  const response = await context.request.post("/api/session", { data: { token: await newToken("admin") }, headers: { "x-work-graph-csrf": "1" } });
  if (!response.ok()) throw new Error(`login failed: ${response.status()}`);
  return context;
}

const validSignature = (secret: string, header: unknown, body: string) => {
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(header)) ?? [];
  return v1 === createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
};

describe("webhooks admin page", () => {
  it("an admin adds a webhook, sends a test event, and sees its deliveries; operators see no webhooks page", async () => {
    const context = await adminContext();
    const page = await context.newPage();
    await page.goto("/");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).click();
    await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor();

    await page.getByLabel("URL").fill(receiverUrl);
    await page.getByLabel(/^Events/).fill("work_item.*");
    await page.getByLabel(/^Label/).fill(`browser ${run}`);
    await page.getByRole("button", { name: "Add webhook" }).click();
    const secret = (await page.locator('[data-testid="new-secret"] .webhook-secret').textContent({ timeout: 10_000 }))!;
    expect(secret).toMatch(/^whsec_/);
    const row = page.locator("[data-webhook-id]").filter({ hasText: receiverUrl });
    await row.waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    await row.getByRole("button", { name: "Send test event" }).click();
    const testRow = page.locator('[data-testid="webhook-deliveries"] tr[data-status="delivered"]').filter({ hasText: "webhook.test" });
    await testRow.waitFor({ timeout: 15_000 });
    expect(await testRow.textContent()).toContain("200");

    const itemId = `hooked-${run}`;
    await admin.workItems.create.mutate({ id: itemId, title: "Announced by webhook" });
    await page.locator('[data-testid="webhook-deliveries"] tr[data-status="delivered"]').filter({ hasText: "work_item.created" }).waitFor({ timeout: 15_000 });
    const created = received.find((r) => r.headers["x-work-graph-event"] === "work_item.created");
    expect(created && JSON.parse(created.body)).toMatchObject({ type: "work_item.created", workItemId: itemId, workItem: { id: itemId, title: "Announced by webhook" } });
    expect(received.every((r) => validSignature(secret, r.headers["x-work-graph-signature"], r.body))).toBe(true);

    // The secret was shown once: after a reload it is nowhere on the page.
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);

    await row.getByRole("button", { name: "Delete" }).click();
    await row.getByRole("button", { name: "Confirm delete" }).click();
    await row.waitFor({ state: "detached", timeout: 10_000 });
    await context.close();

    const operator = await operatorContext(browser);
    const operatorPage = await operator.newPage();
    await operatorPage.goto("/");
    await operatorPage.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Attention" }).waitFor();
    expect(await operatorPage.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).count()).toBe(0);
    await operatorPage.goto("/webhooks");
    await operatorPage.getByText("Only an admin can manage webhooks").waitFor();
    await operator.close();
  });
});

describe("attention inbox alerts", () => {
  it("after opting in, a new request raises a browser notification, and the tab title shows the open count", async () => {
    const context = await operatorContext(browser);
    await context.grantPermissions(["notifications"], { origin: baseURL });
    // Record notifications instead of showing them (headless Chromium has no notification centre).
    await context.addInitScript(() => {
      const shown: { title: string; body?: string }[] = [];
      (window as unknown as { shownNotifications: typeof shown }).shownNotifications = shown;
      class RecordingNotification {
        static permission = "granted";
        static requestPermission = async () => "granted";
        onclick: (() => void) | null = null;
        constructor(title: string, options?: { body?: string }) {
          shown.push({ title, body: options?.body });
        }
        close() {}
      }
      Object.defineProperty(window, "Notification", { value: RecordingNotification, configurable: true });
    });
    const page = await context.newPage();
    await page.goto("/attention");
    await page.getByRole("button", { name: "Notify me of new requests" }).click();
    await page.getByText("Notifying you of new requests.").waitFor();

    const worker = `notify-${run}`;
    const agent = await agentClient(worker);
    await admin.workItems.create.mutate({ id: `notify-${run}`, title: "Pick the launch date" });
    const claimed = await agent.leases.claim.mutate({ workItemId: `notify-${run}` });
    const question = `Launch on Monday or Tuesday? (${run})`;
    await agent.attention.request.mutate({ leaseId: claimed!.lease.id, epoch: claimed!.lease.epoch, kind: "decision", question });

    const notified = () =>
      page.evaluate((text) => (window as unknown as { shownNotifications: { title: string; body?: string }[] }).shownNotifications.find((n) => n.body?.includes(text)), question);
    await expect.poll(notified, { timeout: 10_000 }).toMatchObject({ title: `${worker} asks (blocking)` });
    const open = (await admin.attention.list.query({ status: "open", limit: 200 })).items.length;
    await expect.poll(() => page.title(), { timeout: 5_000 }).toSatisfy((title: string) => title.startsWith(`(${open}) `) && title.includes("Attention"));
    await context.close();
  });
});
