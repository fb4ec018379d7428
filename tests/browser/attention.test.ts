import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Request } from "playwright-core";
import { admin, agentClient, attributeNow, launchBrowser, LIVE_MS, operatorContext, run, textNow } from "./support";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

describe("attention inbox", () => {
  it("a blocking question with options is answered in the inbox, the item becomes ready, and the agent resumes with the answer", async () => {
    const worker = `asker-${run}`;
    const itemId = `ask-${run}`;
    const question = `Which region should the replica live in? (${run})`;
    const agent = await agentClient(worker);
    await admin.workItems.create.mutate({ id: itemId, title: "Set up the read replica" });
    const claimed = await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 600 });

    const context = await operatorContext(browser);
    const page = await context.newPage();
    await page.goto("/attention");
    await page.getByRole("heading", { level: 1, name: "Attention inbox" }).waitFor();
    const countBefore = Number((await textNow(page, '[data-testid="attention-count"]'))?.replace(/\D/g, "") ?? "0");

    const asked = await agent.attention.request.mutate({
      leaseId: claimed!.lease.id,
      epoch: claimed!.lease.epoch,
      kind: "decision",
      question,
      context: "Latency matters most for EU customers.",
      options: ["eu-west-1", "us-east-1"],
      blocking: true,
    });
    expect(asked.endedLease?.outcome).toBe("attention_requested");

    // It appears in the inbox with its options, kind, worker and item; the nav count goes up.
    const card = page.locator(`[data-request-id="${asked.request.id}"]`);
    const asking = Date.now();
    await card.waitFor({ state: "attached", timeout: LIVE_MS });
    console.log(`attention request visible after ${Date.now() - asking} ms`);
    expect(await card.getByRole("heading").textContent()).toBe(question);
    expect(await card.getByRole("radio").count()).toBe(3); // two options + "write a different answer"
    await card.getByRole("radio", { name: "eu-west-1" }).waitFor();
    await card.getByRole("radio", { name: "us-east-1" }).waitFor();
    const text = (await card.textContent()) ?? "";
    for (const expected of ["decision", "blocking", worker, "Set up the read replica", "Latency matters most"]) expect(text).toContain(expected);
    expect(await card.getByRole("link", { name: "Set up the read replica" }).getAttribute("href")).toBe(`/items/${itemId}`);
    await expect
      .poll(async () => Number((await textNow(page, '[data-testid="attention-count"]'))?.replace(/\D/g, "") ?? "0"), { timeout: 1_000 })
      .toBeGreaterThanOrEqual(countBefore + 1);

    // The human picks an option and submits.
    const resolve = card.getByRole("button", { name: "Resolve" });
    expect(await resolve.isDisabled()).toBe(true);
    await card.getByRole("radio", { name: "eu-west-1" }).check();
    await resolve.click();
    await page.getByTestId("just-resolved").getByText(question, { exact: false }).waitFor();
    expect(await attributeNow(page, '[data-testid="just-resolved"] [data-stage]', "data-stage")).toBe("ready");
    await card.waitFor({ state: "detached", timeout: LIVE_MS });

    // Resolved tab: resolver, time, answer, the item's stage now.
    await page.getByRole("button", { name: "Resolved" }).click();
    const resolvedCard = page.locator(`[data-testid="resolved-requests"] [data-request-id="${asked.request.id}"]`);
    await resolvedCard.waitFor();
    const resolvedText = (await resolvedCard.textContent()) ?? "";
    expect(resolvedText).toContain("eu-west-1");
    expect(resolvedText).toMatch(/operator:/);
    expect(await resolvedCard.locator("time").count()).toBeGreaterThan(0);
    expect(await resolvedCard.locator("[data-stage]").getAttribute("data-stage")).toBe("ready");

    // Back in the ready queue: first for its previous worker (continuity).
    await page.goto("/");
    await page.getByLabel("As seen by worker").fill(worker);
    await expect.poll(() => attributeNow(page, '[data-testid="ready-queue"] tbody tr:first-child', "data-item-id"), { timeout: 3_000 }).toBe(itemId);
    expect(await textNow(page, '[data-testid="ready-queue"] tbody tr:first-child')).toContain(worker); // previous worker column

    // The item page: the lease ended with attention_requested, with the question and the answer.
    await page.goto(`/items/${itemId}`);
    const entry = page.locator('[data-testid="lease-history"] [data-epoch="1"]');
    await entry.waitFor();
    expect(await entry.getAttribute("data-outcome")).toBe("attention_requested");
    expect(await entry.textContent()).toContain(question);
    expect(await entry.locator(".resolution-text").textContent()).toBe("eu-west-1");
    expect(await attributeNow(page, '[data-testid="stage-reason"] [data-stage]', "data-stage")).toBe("ready");
    await page.getByTestId("item-attention").getByText("eu-west-1").first().waitFor();

    // The agent's next claim gets the item back, with the resolution.
    const resumed = await agent.leases.claim.mutate({ durationSeconds: 600 });
    expect(resumed?.workItem.id).toBe(itemId);
    expect(resumed?.lease.epoch).toBe(2);
    const answers = (resumed as unknown as { attention: { id: string; resolution: string | null }[] }).attention;
    expect(answers).toEqual([expect.objectContaining({ id: asked.request.id, resolution: "eu-west-1" })]);
    // …and the page shows epoch 2 live, without a reload.
    await expect.poll(() => attributeNow(page, '[data-testid="lease-history"] [data-epoch="2"]', "data-outcome"), { timeout: LIVE_MS }).toBe("live");
    await context.close();
  });

  it("a written answer to a question without options; an already-answered request shows the API's reason", async () => {
    const worker = `writer-${run}`;
    const itemId = `ask-free-${run}`;
    const agent = await agentClient(worker);
    await admin.workItems.create.mutate({ id: itemId, title: "Pick a name for the service" });
    const claimed = await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 600 });
    const asked = await agent.attention.request.mutate({
      leaseId: claimed!.lease.id,
      epoch: claimed!.lease.epoch,
      kind: "help",
      question: `What should the service be called? (${run})`,
    });

    const context = await operatorContext(browser);
    const page = await context.newPage();
    const isInbox = (url: URL) => url.pathname.includes("dashboard.inbox");
    const inboxInFlight = new Set<Request>();
    page.on("request", (request) => void (isInbox(new URL(request.url())) && inboxInFlight.add(request)));
    page.on("requestfinished", (request) => void inboxInFlight.delete(request));
    page.on("requestfailed", (request) => void inboxInFlight.delete(request));
    await page.goto("/attention");
    const card = page.locator(`[data-request-id="${asked.request.id}"]`);
    await card.waitFor();
    expect(await card.getByRole("radio").count()).toBe(0);
    await card.getByLabel("Resolution").fill("Call it Lighthouse.");

    // Someone else answers first, while this page has not polled yet (its inbox refresh is held
    // back): submitting shows the refusal with its reason. An inbox read already on its way
    // when the hold starts is let finish first, or it could bring the answered state in.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const heldRequests = new Set<Request>();
    await page.route(isInbox, async (route) => {
      heldRequests.add(route.request());
      await held;
      await route.continue().catch(() => {});
    });
    await expect.poll(() => [...inboxInFlight].every((request) => heldRequests.has(request))).toBe(true);
    await admin.attention.resolve.mutate({ id: asked.request.id, resolution: "Beacon" });
    await card.getByRole("button", { name: "Resolve" }).click();
    await card.getByRole("alert").waitFor();
    expect(await card.getByRole("alert").textContent()).toContain("ALREADY_RESOLVED");
    release();
    await page.unroute(isInbox);
    await card.waitFor({ state: "detached", timeout: LIVE_MS });
    await context.close();
  });

  it("can be answered with the keyboard alone", async () => {
    const agent = await agentClient(`keys-${run}`);
    const itemId = `ask-keys-${run}`;
    await admin.workItems.create.mutate({ id: itemId, title: "Choose the backup window" });
    const claimed = await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 600 });
    const asked = await agent.attention.request.mutate({
      leaseId: claimed!.lease.id,
      epoch: claimed!.lease.epoch,
      kind: "decision",
      question: `When should backups run? (${run})`,
      options: ["02:00 UTC", "04:00 UTC"],
    });
    const context = await operatorContext(browser);
    const page = await context.newPage();
    await page.goto("/attention");
    const card = page.locator(`[data-request-id="${asked.request.id}"]`);
    await card.waitFor();
    // Into the radio group, arrow to the second option, Tab to the submit button, Enter.
    await card.getByRole("radio", { name: "02:00 UTC" }).focus();
    await page.keyboard.press("ArrowDown");
    expect(await card.getByRole("radio", { name: "04:00 UTC" }).isChecked()).toBe(true);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Resolve");
    // The focused control is visibly marked.
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe("none");
    await page.keyboard.press("Enter");
    await expect.poll(async () => (await admin.attention.get.query({ id: asked.request.id })).resolution, { timeout: 3_000 }).toBe("04:00 UTC");
    await context.close();
  });
});
