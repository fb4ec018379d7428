import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { admin, agentClient, apiClient, baseURL, DESKTOP, launchBrowser, run, settled } from "./support";

/*
 * Issue 10.8 and 10.9 in the real app: security headers, a Content-Security-Policy the
 * dashboard works under (no violations on login and overview), and hostile text (a
 * 5,000-character word, right-to-left overrides) that neither widens a page at 1280 px nor
 * reorders the text around it.
 */

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(() => browser?.close());

const RLO = "\u202e";

/** Records CSP violations (and console errors) from the very start of every document. */
async function watchViolations(page: Page): Promise<() => Promise<string[]>> {
  const consoleErrors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy|Refused to/i.test(message.text())) consoleErrors.push(message.text());
  });
  await page.addInitScript(() => {
    const store = window as unknown as { __cspViolations?: string[] };
    store.__cspViolations = [];
    document.addEventListener("securitypolicyviolation", (event) => {
      store.__cspViolations!.push(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  return async () => [...consoleErrors, ...(await page.evaluate(() => (window as unknown as { __cspViolations?: string[] }).__cspViolations ?? []))];
}

describe("security headers", () => {
  it("pages carry a nonce-based CSP without unsafe-inline, frame-ancestors 'none', X-Frame-Options, nosniff and a Referrer-Policy", async () => {
    const context = await browser.newContext({ baseURL });
    const first = await context.request.get("/login");
    const second = await context.request.get("/login");
    const csp = first.headers()["content-security-policy"]!;
    expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    // A fresh nonce per page view, and it is the one on Next's inline scripts.
    const nonce = csp.match(/'nonce-([^']+)'/)![1]!;
    expect(second.headers()["content-security-policy"]).not.toContain(nonce);
    expect(await first.text()).toContain(`nonce="${nonce}"`);
    for (const response of [first, await context.request.get("/api/trpc/health.check")]) {
      expect(response.headers()["x-frame-options"]).toBe("DENY");
      expect(response.headers()["x-content-type-options"]).toBe("nosniff");
      expect(response.headers()["referrer-policy"]).toBe("no-referrer");
    }
    await context.close();
  });

  it("every /api answer says cache-control: no-store", async () => {
    const context = await browser.newContext({ baseURL });
    const responses = [
      await context.request.get("/api/trpc/health.check"),
      await context.request.get("/api/trpc/tokens.list"),
      await context.request.post("/api/session", { data: { token: "nope" }, headers: { "x-work-graph-csrf": "1" } }),
    ];
    for (const response of responses) expect(response.headers()["cache-control"], response.url()).toBe("no-store");
    await context.close();
  });

  it("the dashboard works under the policy: no CSP violation on login and overview", async () => {
    const operator = await admin.tokens.create.mutate({ role: "operator", label: `csp-${run}` });
    const context = await browser.newContext({ baseURL, viewport: DESKTOP });
    const page = await context.newPage();
    const violations = await watchViolations(page);
    await page.goto("/login");
    await page.getByLabel("Token").fill(operator.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/");
    await page.getByTestId("db-status").getByText("database ok").waitFor();
    await settled(page);
    // Client-side navigation and hydration ran (scripts allowed by the nonce).
    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Leases" }).click();
    await page.waitForURL((url) => url.pathname === "/leases");
    await nav.getByRole("link", { name: "Overview" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    expect(await violations()).toEqual([]);
    await context.close();
  });

  it("another site cannot frame the dashboard", async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const refusals: string[] = [];
    page.on("console", (message) => {
      if (/frame-ancestors|X-Frame-Options/.test(message.text())) refusals.push(message.text());
    });
    // A page on another origin (about:blank's opaque origin) embeds the login page.
    await page.setContent(`<iframe id="victim" src="${baseURL}/login" width="800" height="600"></iframe>`);
    const frame = await (await page.waitForSelector("#victim")).contentFrame();
    await frame!.waitForLoadState("load");
    await expect.poll(() => refusals.length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await frame!.locator("input").count()).toBe(0);
    await context.close();
  });
});

describe("hostile text (10.9)", () => {
  it("5,000-character words and right-to-left overrides never widen a page at 1280 px and stay isolated", async () => {
    const longWord = "W".repeat(5_000);
    const longTitle = "W".repeat(500); // titles are at most 500 characters; descriptions, notes and questions take the 5,000
    const rtlTitle = `invoice${RLO}exe.png`;
    const operatorToken = await admin.tokens.create.mutate({ role: "operator", label: `ops${RLO}live-${run}` });
    const operator = apiClient(operatorToken.token);
    const worker = `w${RLO}evil-${run}`;
    const agent = await agentClient(worker);
    const rtlId = `rtl-${run}`;
    await operator.workItems.create.mutate({ id: `long-${run}`, title: longTitle, description: longWord, priority: 900_000 });
    await operator.workItems.create.mutate({ id: rtlId, title: rtlTitle, description: `${RLO}reversed ${longWord}`, priority: 900_001 });
    const claimed = await agent.leases.claim.mutate({ workItemId: rtlId, durationSeconds: 600 });
    await agent.leases.note.mutate({ leaseId: claimed!.lease.id, epoch: claimed!.lease.epoch, content: `${longWord} ${RLO}note` });
    await agent.attention.request.mutate({
      leaseId: claimed!.lease.id,
      epoch: claimed!.lease.epoch,
      kind: "decision",
      question: `Ship ${RLO}${longWord}?`,
      options: [`yes${RLO}`, "O".repeat(2_000)],
      blocking: false,
    });

    const context = await browser.newContext({ baseURL, viewport: DESKTOP });
    const login = await context.request.post("/api/session", { data: { token: operatorToken.token }, headers: { "x-work-graph-csrf": "1" } });
    expect(login.ok()).toBe(true);
    const page = await context.newPage();
    // The items list is oldest first: filtered to this run, so its first page holds these items whatever ran before.
    for (const path of ["/", `/items?q=${run}`, `/items/${rtlId}`, `/items/long-${run}`, "/leases", "/attention"]) {
      await page.goto(path);
      await page.locator("h1").first().waitFor();
      await settled(page);
      await page.getByText(/WWWWWWWWWW|invoice/).first().waitFor().catch((error: Error) => {
        throw new Error(`${path}: the hostile text never showed (${error.message})`);
      });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `${path} scrolls sideways by ${overflow}px`).toBeLessThanOrEqual(0);

      // Every piece of text holding an override is bidi-isolated from what surrounds it.
      const unisolated = await page.evaluate((rlo) => {
        const isolating = new Set(["isolate", "isolate-override", "plaintext"]);
        const found: string[] = [];
        let count = 0;
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          if (!node.textContent?.includes(rlo)) continue;
          count++;
          const parent = node.parentElement!;
          const style = getComputedStyle(parent);
          const aloneInBlock = !style.display.startsWith("inline") && parent.textContent === node.textContent;
          if (!isolating.has(style.unicodeBidi) && !aloneInBlock) found.push(`${parent.tagName}.${parent.getAttribute("class")}: ${node.textContent.slice(0, 40)}`);
        }
        return { count, found };
      }, RLO);
      expect(unisolated.count, `${path} shows the hostile text`).toBeGreaterThan(0);
      expect(unisolated.found, path).toEqual([]);
    }
    // The top bar's "who" shows the label with the override inside its own isolate.
    const who = page.locator(".who bdi");
    expect(await who.textContent()).toContain(`ops${RLO}live`);
    await context.close();
  });
});
