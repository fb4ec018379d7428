import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext } from "playwright-core";
import { admin, agentClient, eventually, launchBrowser, operatorContext, run } from "./support";

/*
 * The dashboard is live through one events.stream subscription (SSE) per tab, not by polling
 * every second: an idle page sends no queries, and an agent's change shows within 1 s.
 */

let browser: Browser;
let context: BrowserContext;
beforeAll(async () => {
  browser = await launchBrowser();
  context = await operatorContext(browser);
});
afterAll(() => browser?.close());

describe("live updates over events.stream", () => {
  it("an idle page holds one event stream and sends no queries; an agent's note shows on the item page within 1 s", async () => {
    const itemId = `live-note-${run}`;
    const worker = `noter-${run}`;
    const agent = await agentClient(worker);
    await admin.workItems.create.mutate({ id: itemId, title: "Watch the notes" });
    const claimed = (await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 600 }))!;

    const page = await context.newPage();
    const requests: string[] = [];
    page.on("request", (request) => {
      if (request.url().includes("/api/trpc/")) requests.push(new URL(request.url()).pathname.replace("/api/trpc/", ""));
    });
    await page.goto(`/items/${itemId}`);
    await page.getByRole("heading", { name: "Notes", exact: true }).waitFor();
    await eventually(async () => requests.filter((path) => path === "events.stream").length, (n) => n === 1, 5_000);

    // Once the refetch that follows the stream's start is done: 3 s without any query (polling every second would send at least two).
    let settled = -1;
    await eventually(async () => requests.length, (n) => {
      const same = n === settled;
      settled = n;
      return same;
    }, 5_000, 700);
    const before = requests.length;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(requests.slice(before)).toEqual([]);

    await agent.leases.note.mutate({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, content: `progress ${run}` });
    const shown = await eventually(() => page.getByTestId("notes").filter({ hasText: `progress ${run}` }).count(), (n) => n === 1, 3_000);
    console.log(`note visible after ${shown.ms} ms`);
    expect(requests.filter((path) => path === "events.stream")).toHaveLength(1);
    await page.close();
  });
});
