import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, LIVE_MS, launchBrowser, operatorContext, run, screenshot, seriousViolations, textNow } from "./support";

/*
 * The Import page (issue 27 item 3): paste a plan, a dry run shows the tree and marks the
 * refused item where it is, the fixed plan imports; an uploaded Markdown file goes through the
 * same parsers as the CLI.
 */

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

const PLANS = path.resolve(import.meta.dirname, "../../examples/plans");

describe("Import page", () => {
  it("pasted JSON: a refused dry run marks the offending item and writes nothing; fixed, it imports", async () => {
    const context = await operatorContext(browser);
    const page = await context.newPage();
    await page.goto("/import");
    await page.getByRole("heading", { level: 1, name: "Import" }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    const plan = (blockers: string[]) => JSON.stringify({
      items: [
        { ref: "epic", title: `Browser epic ${run}`, externalId: `browser-${run}:epic` },
        { ref: "step", title: `Browser step ${run}`, parent: "epic", dependsOn: blockers, externalId: `browser-${run}:step` },
      ],
    }, null, 2);
    await page.getByLabel("Format").selectOption("json");
    await page.getByLabel("Or paste it").fill(plan([`missing-${run}`]));
    await page.getByRole("button", { name: "Check (dry run)" }).click();
    await expect.poll(() => textNow(page, '[role="alert"] .reason'), { timeout: LIVE_MS }).toBe("NOT_FOUND");
    const offending = page.locator('[data-testid="import-tree"] li[data-offending]');
    await expect.poll(() => offending.getAttribute("data-ref"), { timeout: LIVE_MS }).toBe("step");
    expect(await offending.textContent()).toContain(`missing-${run}`);
    await screenshot(page, "import-refused");
    expect(await page.getByRole("button", { name: "Import", exact: true }).isDisabled()).toBe(true);
    expect((await admin.workItems.list.query({ externalId: `browser-${run}:epic` })).items).toEqual([]);

    await page.getByLabel("Or paste it").fill(plan([]));
    await page.getByRole("button", { name: "Check (dry run)" }).click();
    await expect.poll(() => textNow(page, '[role="status"].import-summary'), { timeout: LIVE_MS }).toMatch(/Dry run: would create 2 items/);
    expect(await page.locator('[data-testid="import-tree"] li[data-offending]').count()).toBe(0);
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await expect.poll(() => textNow(page, '[role="status"].import-summary'), { timeout: LIVE_MS }).toMatch(/Imported: created 2 items/);
    const [epic] = (await admin.workItems.list.query({ externalId: `browser-${run}:epic` })).items;
    expect(epic?.openChildCount).toBe(1);
    expect(await page.locator(`[data-testid="import-tree"] a[href$="/items/${epic!.id}"]`).count()).toBe(1);
    await context.close();
  });

  it("an uploaded Markdown checklist: the dry run shows its tree (ticked items left out)", async () => {
    const context = await operatorContext(browser);
    const page = await context.newPage();
    await page.goto("/import");
    await page.getByRole("heading", { level: 1, name: "Import" }).waitFor();
    await page.getByLabel("Upload a file").setInputFiles(path.join(PLANS, "launch-checklist.md"));
    await expect.poll(() => page.getByLabel("Format").inputValue(), { timeout: LIVE_MS }).toBe("md");
    await page.getByRole("button", { name: "Check (dry run)" }).click();
    await expect.poll(() => textNow(page, '[role="status"].import-summary'), { timeout: LIVE_MS }).toMatch(/Dry run: would create 13 items/);
    const tree = page.locator('[data-testid="import-tree"] li');
    expect(await tree.count()).toBe(13);
    expect(await page.locator('[data-testid="import-tree"]').textContent()).not.toContain("Buy the domain");
    await context.close();
  });
});
