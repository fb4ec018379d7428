import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { agentClient, apiClient, DESKTOP, launchBrowser, operatorContext, operatorTokenOnce, PHONE, run, screenshot, seriousViolations, settled } from "./support";

/*
 * The Activity page: charts of what agents did, at a laptop and a phone width, with the
 * numbers also in a table for screen readers, and no serious axe violations.
 */

let browser: Browser;
let claimsBefore = 0;
const CLAIMS = 3;

beforeAll(async () => {
  browser = await launchBrowser();
  const operator = apiClient(await operatorTokenOnce());
  claimsBefore = (await operator.dashboard.activity.query({ range: "hour" })).totals.claims;
  // Three claims (two released, one asking a blocking question that is answered).
  const agent = await agentClient(`charts-${run}`);
  for (let i = 0; i < CLAIMS; i++) {
    await operator.workItems.create.mutate({ id: `chart-${run}-${i}`, title: `chart item ${i}` });
    const { lease } = (await agent.leases.claim.mutate({ workItemId: `chart-${run}-${i}` }))!;
    if (i < 2) {
      await agent.leases.release.mutate({ leaseId: lease.id, epoch: lease.epoch, evidence: "done" });
    } else {
      const { request } = await agent.attention.request.mutate({ leaseId: lease.id, epoch: lease.epoch, kind: "decision", question: "Which one?" });
      await operator.attention.resolve.mutate({ id: request.id, resolution: "The first" });
    }
  }
});
afterAll(() => browser?.close());

describe.each([
  { device: "desktop", viewport: DESKTOP },
  { device: "phone", viewport: PHONE },
])("Activity page at $device width ($viewport.width px)", ({ device, viewport }) => {
  it("shows the charts and their table, fits the width, and has no serious accessibility violations", async () => {
    const context = await operatorContext(browser, viewport);
    const page = await context.newPage();
    await page.goto("/");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Activity" }).click();
    await page.getByRole("heading", { level: 1, name: "Activity" }).waitFor();
    await page.getByRole("button", { name: "Last hour" }).click();
    await settled(page);
    await page.getByTestId("chart-claims").waitFor();
    expect(await page.getByRole("button", { name: "Last hour" }).getAttribute("aria-pressed")).toBe("true");

    for (const chart of ["claims", "releases", "expiries", "revocations", "attentionRequests", "ready-to-claim", "attention-wait"]) {
      const box = await page.getByTestId(`chart-${chart}`).locator("svg").boundingBox();
      expect(box, chart).not.toBeNull();
      expect(box!.width, chart).toBeGreaterThan(200);
      expect(box!.height, chart).toBeGreaterThan(40);
    }
    // The seeded claims are drawn: the total beside the chart and at least one bar.
    const total = Number(await page.getByTestId("chart-claims").locator(".chart-total").textContent());
    expect(total).toBeGreaterThanOrEqual(claimsBefore + CLAIMS);
    expect(await page.getByTestId("chart-claims").locator("rect").count()).toBeGreaterThan(0);
    expect(await page.getByTestId("chart-attention-wait").locator("circle").count()).toBeGreaterThan(0);

    // Screen readers get the numbers as tables (12 five-minute rows), not the drawings.
    const table = page.getByRole("table", { name: /Lease and attention events per 5 minutes/ });
    expect(await table.getByRole("row").count()).toBe(13);
    expect(await page.getByTestId("chart-claims").locator("svg").getAttribute("aria-hidden")).toBe("true");

    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await screenshot(page, `activity-${device}`);
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole("button", { name: "Last week" }).click();
    const week = page.getByRole("table", { name: /Lease and attention events per 6 hours/ });
    await week.waitFor({ state: "attached" });
    expect(await week.getByRole("row").count()).toBe(29);
    await context.close();
  });
});
