import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { admin, agentClient, launchBrowser, operatorContext, run } from "./support";

/*
 * The dashboard is live through one events.stream subscription (SSE) per tab, not by polling
 * every second: an idle page sends no queries, and an agent's change shows at once (well under a
 * second; the test allows 3 s, the fallback poll would take 15).
 */

let browser: Browser;
let context: BrowserContext;
beforeAll(async () => {
  browser = await launchBrowser();
  context = await operatorContext(browser);
});
afterAll(() => browser?.close());

/** Every request the page sent before this call has been seen (the browser reports a page's requests in order). */
async function seenAllRequests(page: Page) {
  await Promise.all([page.waitForRequest((request) => request.url().includes("barrier=")), page.evaluate(() => fetch("/api/trpc/health.check?barrier=1").then((response) => response.status))]);
}

describe("live updates over events.stream", () => {
  it("an idle page holds one event stream and sends no queries; an agent's note shows on the item page within 3 s", async () => {
    const itemId = `live-note-${run}`;
    const worker = `noter-${run}`;
    const agent = await agentClient(worker);
    await admin.workItems.create.mutate({ id: itemId, title: "Watch the notes" });
    const claimed = (await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 600 }))!;

    const page = await context.newPage();
    // The page's timers run on a clock the test can stop: time flows as usual until it is paused.
    await page.clock.install();
    const requests: string[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith("/api/trpc/") && !url.searchParams.has("barrier")) requests.push(url.pathname.replace("/api/trpc/", ""));
    });
    await page.goto(`/items/${itemId}`);
    await page.getByRole("heading", { name: "Notes", exact: true }).waitFor();
    await expect.poll(() => requests.filter((path) => path === "events.stream").length, { timeout: 5_000 }).toBe(1);

    // Once the refetch that follows the stream's start is done (no new request for 700 ms), stop
    // the page's clock and run 5 s of its timers: polling every second would send at least five queries.
    let seen = -1;
    await expect.poll(() => seen === (seen = requests.length), { timeout: 5_000, interval: 700 }).toBe(true);
    await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 100);
    const before = requests.length;
    await page.clock.runFor(5_000);
    await seenAllRequests(page);
    expect(requests.slice(before)).toEqual([]);
    await page.clock.resume();

    await agent.leases.note.mutate({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, content: `progress ${run}` });
    const noted = Date.now();
    await page.getByTestId("notes").filter({ hasText: `progress ${run}` }).waitFor({ timeout: 3_000 });
    console.log(`note visible after ${Date.now() - noted} ms`);
    expect(requests.filter((path) => path === "events.stream")).toHaveLength(1);
    await page.close();
  });
});
