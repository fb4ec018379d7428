import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { POLL_MS } from "@/app/_components/constants";
import { admin, baseURL, launchBrowser, newToken, operatorTokenOnce, run } from "./support";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

describe("login", () => {
  it("sends a visitor without a session to /login, refuses wrong and agent tokens clearly, and signs an operator in and out", async () => {
    const context = await browser.newContext({ baseURL });
    const page = await context.newPage();

    // Every page needs a session.
    for (const path of ["/", "/leases", "/attention", "/items", "/items/anything"]) {
      await page.goto(path);
      expect(new URL(page.url()).pathname, `${path} without a session`).toBe("/login");
    }

    const token = page.getByLabel("Token");
    const signIn = page.getByRole("button", { name: "Sign in" });

    await token.fill("wgo_this-is-not-a-real-token");
    await signIn.click();
    await expect.poll(() => page.locator("#login-error").textContent()).toMatch(/not valid/i);
    expect(new URL(page.url()).pathname).toBe("/login");

    await token.fill(await newToken("agent", `login-agent-${run}`));
    await signIn.click();
    await expect.poll(() => page.locator("#login-error").textContent()).toMatch(/agent token.*operator or admin/i);
    expect(new URL(page.url()).pathname).toBe("/login");

    await token.fill(await operatorTokenOnce());
    await signIn.click();
    await page.waitForURL((url) => url.pathname === "/");
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    await page.getByTestId("db-status").getByText("database ok").waitFor();

    // The session cookie: httpOnly, SameSite=Strict, whole site, not Secure over plain http.
    const cookie = (await context.cookies()).find((c) => c.name === "wg_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/", secure: false });
    expect(await page.evaluate(() => document.cookie)).not.toContain("wg_session");

    // A cookie-authenticated mutation without the dashboard's CSRF header is refused (as a cross-site form post would be).
    const forged = await context.request.post("/api/trpc/workItems.create", { data: { title: "forged" } });
    expect(forged.status()).toBe(401);
    expect((await forged.json()).error.data.reason).toBe("UNAUTHENTICATED");
    const allowed = await context.request.get(`/api/trpc/dashboard.summary`, { headers: { "x-work-graph-csrf": "1" } });
    expect(allowed.ok()).toBe(true);

    // The cookie carries a random session id, not the token.
    expect(cookie!.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie!.value).not.toBe(await operatorTokenOnce());
    // A copy of the cookie works in another browser while the session lives …
    const copy = await browser.newContext({ baseURL });
    await copy.addCookies([{ ...cookie!, sameSite: "Strict" }]);
    expect((await copy.request.get("/api/trpc/dashboard.summary")).status()).toBe(200);

    await page.getByRole("button", { name: "Log out" }).click();
    // Polling queries that now get 401 also send the page to /login; either navigation may win.
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 15_000 }).toBe("/login");
    await page.getByLabel("Token").waitFor();
    expect((await context.cookies()).find((c) => c.name === "wg_session")).toBeUndefined();
    await page.goto("/attention");
    expect(new URL(page.url()).pathname).toBe("/login");

    // … and stops working after logout: the session is gone on the server, not only in this browser.
    const replayed = await copy.request.get("/api/trpc/dashboard.summary");
    expect(replayed.status()).toBe(401);
    expect((await replayed.json()).error.data.reason).toBe("UNAUTHENTICATED");
    const copyPage = await copy.newPage();
    await copyPage.goto("/");
    expect(new URL(copyPage.url()).pathname).toBe("/login");
    await copy.close();
    await context.close();
  });

  it("an admin token signs in too; a revoked token is sent back to /login", async () => {
    const context = await browser.newContext({ baseURL });
    const page = await context.newPage();
    const { id, token } = await admin.tokens.create.mutate({ role: "admin", label: `login-admin-${run}` });
    await page.goto("/login");
    await page.getByLabel("Token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/");
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();

    await admin.tokens.revoke.mutate({ id });
    // The open page notices when its event stream is refused (the server re-checks every 5 s) or on
    // its next query, at the latest on the fallback poll (POLL_MS); either may send it to /login, and
    // a later one aborts an earlier navigation (net::ERR_ABORTED), so the test waits for where the
    // page ends up, not for one navigation. A new navigation is refused by the server.
    await expect.poll(() => new URL(page.url()).pathname, { timeout: POLL_MS + 10_000 }).toBe("/login");
    await page.getByLabel("Token").waitFor();
    await page.goto("/leases");
    expect(new URL(page.url()).pathname).toBe("/login");
    await context.close();
  });
});
