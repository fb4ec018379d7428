import { createTRPCClient, httpLink } from "@trpc/client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRouter } from "../../server/trpc/root";
import { launchBrowser, screenshot, seriousViolations, settled } from "./support";
import { startSsoApp, type SsoApp } from "./sso-app";

/*
 * Issue 25 in Chromium: "Sign in with …" on /login, the provider's own sign-in page, back on the
 * dashboard as the person; an admin disables a person and that person's open tab goes to /login.
 */

let app: SsoApp;
let browser: Browser;

beforeAll(async () => {
  [app, browser] = await Promise.all([startSsoApp(), launchBrowser()]);
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
}, 60_000);

async function signIn(page: Page, login: string) {
  await page.goto(`${app.url}/login`);
  await page.getByRole("link", { name: "Sign in with 127.0.0.1" }).click();
  await page.getByLabel("Username").fill(login);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.origin === app.url && url.pathname === "/", { timeout: 30_000 });
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
}

describe("single sign-on", () => {
  it("signs a person in at the provider and lands on the dashboard under their name; token login is still offered", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${app.url}/`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.getByLabel("Token").waitFor();
    await screenshot(page, "login-sso-desktop");
    expect(await seriousViolations(page)).toEqual([]);

    await signIn(page, "dana");
    await page.locator(".topbar").getByText("Dana Li").waitFor();
    // An admin sees the People page, and herself on it.
    await page.getByRole("link", { name: "People" }).click();
    await page.getByTestId("people").locator('[data-subject="dana-001"]').waitFor();
    await settled(page);
    await screenshot(page, "people-desktop");
    expect(await seriousViolations(page)).toEqual([]);
    // Her own CLI tokens: one made here is shown once and listed.
    await page.locator(".topbar").getByRole("link", { name: "Dana Li" }).click();
    await page.getByRole("heading", { level: 1, name: "Your CLI tokens" }).waitFor();
    await page.getByLabel("Label").fill("laptop");
    await page.getByRole("button", { name: "Create token" }).click();
    expect(await page.getByTestId("new-token").textContent()).toMatch(/^wgo_/);
    await page.getByRole("button", { name: "Revoke laptop" }).waitFor();
    await settled(page);
    await screenshot(page, "account-desktop");
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  });

  it("an account in no group is refused with a page that says why and whom to ask", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${app.url}/login`);
    await page.getByRole("link", { name: "Sign in with 127.0.0.1" }).click();
    await page.getByLabel("Username").fill("nora");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/login/refused");
    expect(await page.getByTestId("refusal").textContent()).toMatch(/none of the groups/);
    await page.getByText("wg-admins, wg-operators").waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  });

  it("disabling a person sends their open tab to /login", async () => {
    const omar = await browser.newContext();
    const page = await omar.newPage();
    await signIn(page, "omar");
    await page.locator(".topbar").getByText("Omar Haddad").waitFor();

    const admin = createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${app.url}/api/trpc`, headers: () => ({ authorization: `Bearer ${app.adminToken}` }) })],
    });
    const person = (await admin.people.list.query()).find((candidate) => candidate.subject === "omar-002")!;
    await admin.people.disable.mutate({ id: person.id });
    // The tab's next poll, or its event stream, is refused: it goes to the login page on its own
    // (a later refusal may abort an earlier navigation there, so wait for where the page ends up).
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 60_000 }).toBe("/login");
    await omar.close();
  });
});
