import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { baseURL, DESKTOP, launchBrowser } from "./support";

/*
 * GET /api/docs (docs/api.md "Every language"): the API reference renders the OpenAPI
 * document with nothing but what the app serves. Every request to another origin is blocked
 * and recorded; the page must render every procedure anyway, and must not even try.
 */

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

describe("API reference", () => {
  it("renders every procedure of /api/openapi.json with the network beyond the app blocked", { timeout: 180_000 }, async () => {
    const context = await browser.newContext({ baseURL, viewport: DESKTOP });
    const app = new URL(baseURL).origin;
    const outside: string[] = [];
    await context.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.origin === app) return route.continue();
      outside.push(url.href);
      return route.abort("blockedbyclient");
    });
    const page = await context.newPage();
    const failures: string[] = [];
    page.on("pageerror", (error) => failures.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") failures.push(message.text());
    });

    const document = (await (await context.request.get("/api/openapi.json")).json()) as { paths: Record<string, unknown> };
    const procedures = Object.keys(document.paths);
    await page.goto("/api/docs");
    await expect.poll(() => page.locator(".opblock").count(), { timeout: 60_000 }).toBe(procedures.length);
    await expect(page.locator(".info .title").innerText()).resolves.toContain("Work Graph API");

    const claim = page.locator(".opblock", { hasText: "/api/trpc/leases.claim" });
    await expect(claim.locator(".opblock-summary-method").innerText()).resolves.toBe("POST");
    await claim.locator(".opblock-summary").click();
    await expect.poll(() => claim.locator(".opblock-body").innerText(), { timeout: 30_000 }).toContain("waitSeconds");
    await expect(page.locator(".btn.authorize").count()).resolves.toBe(1);

    expect(outside).toEqual([]);
    expect(failures).toEqual([]);
    await context.close();
  });
});
