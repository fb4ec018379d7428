import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { admin, agentClient, attributeNow, baseURL, launchBrowser, LIVE_MS, operatorContext, run, textNow } from "./support";

/*
 * Live leases: an agent (a tRPC client over HTTP) acts; the open pages show it without a reload
 * within LIVE_MS (5 s; in practice well under a second: events.stream wakes them, the poll is
 * only a 15 s fallback).
 */

let browser: Browser;
let context: BrowserContext;
beforeAll(async () => {
  browser = await launchBrowser();
  context = await operatorContext(browser);
});
afterAll(() => browser?.close());

/** Marks the document, so a test can prove the page was never reloaded. */
async function markDocument(page: Page) {
  await page.evaluate(() => ((window as unknown as { __notReloaded: boolean }).__notReloaded = true));
}
const stillSameDocument = (page: Page) => page.evaluate(() => (window as unknown as { __notReloaded?: boolean }).__notReloaded === true);

async function secondsLeft(page: Page, leaseId: string): Promise<number | null> {
  const value = await attributeNow(page, `tr[data-lease-id="${leaseId}"] [data-seconds-left]`, "data-seconds-left");
  return value === null ? null : Number(value);
}

describe("live leases on / and /leases", () => {
  it("a claim shows up live with worker and epoch; a renewal makes the countdown jump", async () => {
    const worker = `claimer-${run}`;
    const itemId = `live-claim-${run}`;
    const agent = await agentClient(worker);
    await admin.workItems.create.mutate({ id: itemId, title: "Watch me being claimed" });

    const leasesPage = await context.newPage();
    const overviewPage = await context.newPage();
    await leasesPage.goto("/leases");
    await overviewPage.goto("/");
    await leasesPage.getByRole("heading", { name: "Active leases" }).waitFor();
    await overviewPage.getByRole("heading", { name: "Active leases" }).waitFor();
    await markDocument(leasesPage);
    await markDocument(overviewPage);

    const claimed = await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 120 });
    const lease = claimed!.lease;
    const rowSelector = `tr[data-lease-id="${lease.id}"]`;
    const claimedAt = Date.now();
    const [onLeases, onOverview] = await Promise.all(
      [leasesPage, overviewPage].map((page) => page.locator(rowSelector).waitFor({ state: "attached", timeout: LIVE_MS }).then(() => Date.now() - claimedAt)),
    );
    console.log(`claim visible after ${onLeases} ms on /leases, ${onOverview} ms on /`);

    for (const page of [leasesPage, overviewPage]) {
      const row = page.locator(rowSelector);
      expect(await row.locator(".worker").textContent()).toBe(worker);
      expect(await row.locator(".epoch").textContent()).toBe("1");
      expect(await row.textContent()).toContain("Watch me being claimed");
      const left = await secondsLeft(page, lease.id);
      expect(left).toBeGreaterThan(100);
      expect(left).toBeLessThanOrEqual(120);
    }
    // The countdown ticks by itself, without new data.
    const before = (await secondsLeft(leasesPage, lease.id))!;
    let ticked: number | null = null;
    await expect.poll(async () => (ticked = await secondsLeft(leasesPage, lease.id)), { timeout: LIVE_MS }).toBeLessThan(before);
    expect(ticked).toBeGreaterThanOrEqual(before - 3);
    expect(await leasesPage.locator(`${rowSelector} .countdown`).textContent()).toMatch(/^1:\d\d$/);

    await agent.leases.renew.mutate({ leaseId: lease.id, epoch: lease.epoch, durationSeconds: 3_600 });
    const renewedAt = Date.now();
    await Promise.all([leasesPage, overviewPage].map((page) => expect.poll(() => secondsLeft(page, lease.id), { timeout: LIVE_MS }).toBeGreaterThan(3_500)));
    console.log(`renewal visible after ${Date.now() - renewedAt} ms`);
    expect(await leasesPage.locator(`${rowSelector} .countdown`).textContent()).toMatch(/^(59:\d\d|1:00:00)$/);
    await expect.poll(() => textNow(leasesPage, rowSelector), { timeout: LIVE_MS }).toMatch(/ago/); // last renewal shown
    expect(await stillSameDocument(leasesPage)).toBe(true);
    expect(await stillSameDocument(overviewPage)).toBe(true);

    // Filter by worker: only this worker's leases remain.
    await leasesPage.getByLabel("Worker", { exact: true }).fill(worker);
    await expect.poll(() => leasesPage.locator('[data-testid="active-leases"] tr[data-lease-id] .worker').allTextContents(), { timeout: 3_000 }).toEqual([worker]);
    expect(new URL(leasesPage.url()).searchParams.get("worker")).toBe(worker);

    await agent.leases.release.mutate({ leaseId: lease.id, epoch: lease.epoch, evidence: "done" });
    await expect.poll(() => attributeNow(leasesPage, `[data-testid="recent-leases"] ${rowSelector} [data-outcome]`, "data-outcome"), { timeout: LIVE_MS }).toBe("released");
    expect(await leasesPage.locator(`[data-testid="active-leases"] ${rowSelector}`).count()).toBe(0);
    await leasesPage.close();
    await overviewPage.close();
  });

  it("an expired lease is shown ended with outcome expired after the sweep, without a reload", async () => {
    const worker = `sleeper-${run}`;
    const itemId = `live-expire-${run}`;
    const agent = await agentClient(worker);
    await admin.workItems.create.mutate({ id: itemId, title: "A lease that will lapse" });
    const page = await context.newPage();
    await page.goto("/leases");
    await page.getByRole("heading", { name: "Recently ended" }).waitFor();
    await markDocument(page);

    const claimed = await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 3 });
    const rowSelector = `tr[data-lease-id="${claimed!.lease.id}"]`;
    await page.locator(`[data-testid="active-leases"] ${rowSelector}`).waitFor({ state: "attached", timeout: LIVE_MS });
    // Under a minute left: marked.
    expect(await page.locator(`[data-testid="active-leases"] ${rowSelector}`).textContent()).toContain("expires soon");

    // Expiry at +3 s, the sweep runs every 250 ms; its commit reaches the page through events.stream.
    const claimedAt = Date.now();
    await expect.poll(() => attributeNow(page, `[data-testid="recent-leases"] ${rowSelector} [data-outcome]`, "data-outcome"), { timeout: 8_000 }).toBe("expired");
    console.log(`expired lease shown ended ${Date.now() - claimedAt} ms after the claim was seen`);
    const row = page.locator(`[data-testid="recent-leases"] ${rowSelector}`);
    expect(await row.locator(".worker").textContent()).toBe(worker);
    expect(await row.locator(".epoch").textContent()).toBe("1");
    expect(await row.locator("[data-outcome]").textContent()).toBe("expired");
    expect(await page.locator(`[data-testid="active-leases"] ${rowSelector}`).count()).toBe(0);
    expect(await stillSameDocument(page)).toBe(true);
    // The API agrees: the sweep recorded it (not only a countdown reaching zero in the browser).
    expect((await admin.leases.get.query({ leaseId: claimed!.lease.id })).outcome).toBe("expired");
    await page.close();
  });

  it("countdowns are corrected for a browser clock that is off by minutes", async () => {
    const agent = await agentClient(`skewed-${run}`);
    const itemId = `live-skew-${run}`;
    await admin.workItems.create.mutate({ id: itemId, title: "Counted on the database clock" });
    const claimed = await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 300 });
    const session = await context.storageState();
    for (const skewMs of [10 * 60_000, -7 * 60_000]) {
      const skewed = await browser.newContext({ baseURL, storageState: session });
      const page = await skewed.newPage();
      // The browser's clock is wrong: Date.now() and new Date() are off by skewMs.
      await page.addInitScript((offset) => {
        const RealDate = Date;
        const realNow = RealDate.now.bind(RealDate);
        class SkewedDate extends RealDate {
          constructor(...args: unknown[]) {
            if (args.length === 0) super(realNow() + offset);
            else super(...(args as [string]));
          }
          static override now() {
            return realNow() + offset;
          }
        }
        globalThis.Date = SkewedDate as DateConstructor;
      }, skewMs);
      await page.goto("/leases");
      const browserAhead = await page.evaluate(() => Date.now() - (performance.timeOrigin + performance.now()));
      expect(Math.round(browserAhead / 60_000)).toBe(skewMs / 60_000);
      let value: number | null = null;
      await expect.poll(async () => (value = await secondsLeft(page, claimed!.lease.id)), { timeout: LIVE_MS }).not.toBeNull();
      // Uncorrected it would read 0 (expired, clock ahead) or ~720 (clock behind).
      expect(value).toBeGreaterThan(280);
      expect(value).toBeLessThanOrEqual(300);
      await skewed.close();
    }
  });
});
