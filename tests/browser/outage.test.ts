import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { postmasterPid } from "../../scripts/server-process";
import { baseURL, launchBrowser, operatorContext, required } from "./support";

/*
 * kill -9 of the embedded PostgreSQL under the running server: `npm start`'s supervisor brings
 * it back within about a second. A dashboard page requested in that window cannot check its
 * session; the person sees a plain "unavailable" page that retries by itself, never Next's bare
 * 500 page or anything internal.
 */

const cluster = path.join(required("WG_DATA_DIR"), "postgres");
const INTERNALS = /127\.0\.0\.1:\d|prisma|ECONNREFUSED|ECONNRESET|terminat|Internal Server Error|digest|\bat \w+ \(/i;

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

describe("a dashboard page during a database outage", () => {
  it("says the database is unreachable, shows nothing internal, and loads by itself once it is back", async () => {
    const context = await operatorContext(browser);
    const page = await context.newPage();
    await page.goto("/leases");
    await page.getByRole("heading", { level: 1, name: "Leases" }).waitFor();

    // The page load must fall inside the outage: the restart takes far longer than the few
    // milliseconds between the kill and the request, but a loaded machine gets three tries.
    let outagePage: string | null = null;
    for (let attempt = 0; attempt < 3 && outagePage === null; attempt++) {
      // A kill only counts once the previous restart is complete (its new postmaster is serving).
      await expect.poll(async () => (await fetch(`${baseURL}/api/health/ready`)).status, { timeout: 30_000 }).toBe(200);
      process.kill(postmasterPid(cluster), "SIGKILL");
      await page.goto("/leases");
      if (await page.getByTestId("page-error").isVisible()) outagePage = await page.locator("body").innerText();
      else await page.getByRole("heading", { level: 1, name: "Leases" }).waitFor();
    }
    expect(outagePage, "no page load fell inside the outage in three kills").not.toBeNull();
    expect(outagePage).toMatch(/Work Graph is unavailable/);
    expect(outagePage).toMatch(/cannot reach its database/);
    expect(outagePage).not.toMatch(INTERNALS);

    // No reload by the person: the page retries until the restarted database answers.
    await page.getByRole("heading", { level: 1, name: "Leases" }).waitFor({ timeout: 30_000 });
    expect(await page.getByTestId("page-error").count()).toBe(0);
    await context.close();
  });
});
