import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { seedShowcase } from "./seed";
import { baseURL, DESKTOP, launchBrowser, operatorContext, PHONE, screenshot, seriousViolations, settled } from "./support";

/*
 * Every page, at a laptop and a phone width, with data made by agents: a full-page
 * screenshot to test-results/screenshots/, and axe-core with no serious or critical
 * violations.
 */

let browser: Browser;
let ids: Awaited<ReturnType<typeof seedShowcase>>["ids"];

beforeAll(async () => {
  browser = await launchBrowser();
  ({ ids } = await seedShowcase());
});
afterAll(() => browser?.close());

const pages = () => [
  { name: "overview", path: "/", heading: "Overview" },
  { name: "items", path: "/items", heading: "Items" },
  { name: "item", path: `/items/${ids.schema}`, heading: "Write the schema migration" },
  { name: "item-parent", path: `/items/${ids.parent}`, heading: "Launch the CSV importer" },
  { name: "leases", path: "/leases", heading: "Leases" },
  { name: "workers", path: "/workers", heading: "Workers" },
  { name: "attention", path: "/attention", heading: "Attention inbox" },
  { name: "attention-resolved", path: "/attention?tab=resolved", heading: "Attention inbox" },
  { name: "limits", path: "/limits", heading: "Limits" },
  { name: "unroutable", path: "/unroutable", heading: "Unroutable items" },
  { name: "import", path: "/import", heading: "Import" },
];

describe.each([
  { device: "desktop", viewport: DESKTOP },
  { device: "phone", viewport: PHONE },
])("every page at $device width ($viewport.width px)", ({ device, viewport }) => {
  it("login page: screenshot and no serious accessibility violations", async () => {
    const context = await browser.newContext({ baseURL, viewport });
    const page = await context.newPage();
    await page.goto("/login");
    await page.getByLabel("Token").waitFor();
    await screenshot(page, `login-${device}`);
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  });

  it("dashboard pages: screenshot and no serious accessibility violations", async () => {
    const context = await operatorContext(browser, viewport);
    const page = await context.newPage();
    const problems: Record<string, unknown> = {};
    for (const { name, path, heading } of pages()) {
      await page.goto(path);
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
      await settled(page);
      await page.getByTestId("db-status").getByText("database ok").waitFor();
      // Nothing may overflow the viewport sideways (phone width in particular).
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      if (overflow > 1) problems[`${name}: horizontal overflow`] = overflow;
      await screenshot(page, `${name}-${device}`);
      const violations = await seriousViolations(page);
      if (violations.length > 0) problems[name] = violations;
    }
    expect(problems, JSON.stringify(problems, null, 2)).toEqual({});
    await context.close();
  });
});

describe("keyboard", () => {
  it("the first Tab reaches a visible skip link, which moves focus to the page content", async () => {
    const context = await operatorContext(browser);
    const page = await context.newPage();
    await page.goto("/leases");
    await page.getByRole("heading", { level: 1, name: "Leases" }).waitFor();
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => {
      const element = document.activeElement as HTMLElement;
      const box = element.getBoundingClientRect();
      return { text: element.textContent, top: box.top, outline: getComputedStyle(element).outlineStyle };
    });
    expect(focused.text).toBe("Skip to content");
    expect(focused.top).toBeGreaterThanOrEqual(0); // on screen once focused
    expect(focused.outline).not.toBe("none");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");
    // Tab order continues inside the page: the worker filter comes first.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.id)).toBe("worker-filter");
    await context.close();
  });
});

