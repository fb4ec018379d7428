import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { admin, agentClient, attributeNow, launchBrowser, LIVE_MS, operatorContext, run, textNow } from "./support";

/* Operators change the graph from the UI: create, dependencies, priority, cancel; refusals show their reason. */

/** The stage the item page shows (data-stage of its stage reason), read without waiting. */
const stage = (page: Page) => attributeNow(page, '[data-testid="stage-reason"] [data-stage]', "data-stage");

let browser: Browser;
let context: BrowserContext;
beforeAll(async () => {
  browser = await launchBrowser();
  context = await operatorContext(browser);
});
afterAll(() => browser?.close());

describe("operator actions", () => {
  it("creates an item, adds and removes a dependency, changes priority and cancels it; errors show their reason", async () => {
    const page = await context.newPage();
    const itemId = `op-made-${run}`;
    const blockerId = `op-blocker-${run}`;
    await admin.workItems.create.mutate({ id: blockerId, title: "Order the hardware" });

    await page.goto("/items");
    await page.getByRole("button", { name: "New item" }).click();
    const form = page.getByRole("form", { name: "Create a work item" });
    await form.getByLabel("Title").fill("Install the new rack");
    await form.getByLabel("Id (optional)", { exact: true }).fill(itemId);
    await form.getByLabel("Priority").fill("7");
    await form.getByLabel("Description").fill("Row C, next to the UPS.");
    await form.getByRole("button", { name: "Create item" }).click();
    await form.getByRole("status").getByRole("link", { name: itemId }).waitFor();
    const created = await admin.workItems.get.query({ id: itemId });
    expect(created).toMatchObject({ title: "Install the new rack", priority: 7, description: "Row C, next to the UPS.", stage: "ready" });

    // The same id again: the API's DUPLICATE refusal is shown.
    await form.getByLabel("Title").fill("Install the new rack again");
    await form.getByLabel("Id (optional)", { exact: true }).fill(itemId);
    await form.getByRole("button", { name: "Create item" }).click();
    await form.getByRole("alert").getByText("DUPLICATE").waitFor();

    await page.goto(`/items/${itemId}`);
    await page.getByRole("heading", { level: 1, name: "Install the new rack" }).waitFor();

    // Priority.
    await page.getByLabel("Priority", { exact: true }).fill("9");
    await page.getByRole("button", { name: "Save priority" }).click();
    await expect.poll(() => textNow(page, '[data-testid="item-priority"]'), { timeout: LIVE_MS }).toBe("9");
    expect((await admin.workItems.get.query({ id: itemId })).priority).toBe(9);

    // A dependency on an item that does not exist: NOT_FOUND, shown.
    const dependency = page.getByLabel(/Add a dependency/);
    await dependency.fill(`no-such-item-${run}`);
    await page.getByRole("button", { name: "Add dependency" }).click();
    await page.getByRole("alert").getByText("NOT_FOUND").waitFor();

    // A real one: the item becomes blocked, and the page says by what.
    await dependency.fill(blockerId);
    await page.getByRole("button", { name: "Add dependency" }).click();
    await expect.poll(() => stage(page), { timeout: LIVE_MS }).toBe("blocked");
    expect(await textNow(page, '[data-testid="stage-reason"]')).toContain("Blocked by dependency");
    expect(await textNow(page, '[data-testid="stage-reason"]')).toContain(blockerId);
    await page.locator('[data-testid="dependencies"]').getByText("Order the hardware").waitFor();
    // The graph draws it as a blocker linking to its page.
    expect(await page.locator(`[data-testid="neighbourhood-graph"] a[href="/items/${blockerId}"]`).count()).toBe(1);

    // A cycle is refused with DEPENDENCY_CYCLE (from the blocker's page).
    const blockerPage = await context.newPage();
    await blockerPage.goto(`/items/${blockerId}`);
    await blockerPage.locator('[data-testid="dependents"]').getByText("Install the new rack").waitFor();
    await blockerPage.getByLabel(/Add a dependency/).fill(itemId);
    await blockerPage.getByRole("button", { name: "Add dependency" }).click();
    await blockerPage.getByRole("alert").getByText("DEPENDENCY_CYCLE").waitFor();
    await blockerPage.close();

    await page.getByRole("button", { name: `Remove dependency on ${blockerId}` }).click();
    await expect.poll(() => stage(page), { timeout: LIVE_MS }).toBe("ready");
    expect((await admin.workItems.get.query({ id: itemId })).dependsOn).toEqual([]);

    // Cancelling a leased item is refused (no pre-emption): ITEM_LEASED.
    const agent = await agentClient(`op-agent-${run}`);
    const claimed = await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 600 });
    await expect.poll(() => stage(page), { timeout: LIVE_MS }).toBe("leased");
    await page.getByLabel(/Cancel this item/).fill("No longer needed");
    await page.getByRole("button", { name: "Cancel item" }).click();
    await page.getByRole("alert").getByText("ITEM_LEASED").waitFor();
    expect((await admin.workItems.get.query({ id: itemId })).status).toBe("open");

    expect(claimed?.lease.epoch).toBe(1);

    // An unleased item is cancelled.
    const spare = `op-spare-${run}`;
    await admin.workItems.create.mutate({ id: spare, title: "Spare item to cancel" });
    await page.goto(`/items/${spare}`);
    await page.getByLabel(/Cancel this item/).fill("Duplicate of another item");
    await page.getByRole("button", { name: "Cancel item" }).click();
    await expect.poll(() => stage(page), { timeout: LIVE_MS }).toBe("cancelled");
    expect(await admin.workItems.get.query({ id: spare })).toMatchObject({ status: "cancelled" });
    // Terminal: no actions offered any more.
    expect(await page.getByRole("button", { name: "Cancel item" }).count()).toBe(0);
    await page.close();
  });

  it("items: filter by stage, search by id or title, and page through results", async () => {
    const prefix = `page-${run}`;
    for (let index = 1; index <= 27; index++) {
      await admin.workItems.create.mutate({ id: `${prefix}-${String(index).padStart(2, "0")}`, title: `Paged item ${index}` });
    }
    const page = await context.newPage();
    await page.goto("/items");
    await page.getByLabel("Search id or title").fill(prefix);
    const ids = () => page.locator('[data-testid="items-table"] tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute("data-item-id")));
    await expect.poll(ids, { timeout: LIVE_MS }).toSatisfy((list: (string | null)[]) => list.length === 25 && list.every((id) => id?.startsWith(prefix)));
    expect(new URL(page.url()).searchParams.get("q")).toBe(prefix);
    await page.getByRole("button", { name: "Next" }).click();
    await expect.poll(ids, { timeout: LIVE_MS }).toEqual([`${prefix}-26`, `${prefix}-27`]);
    expect(await page.getByRole("button", { name: "Next" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Previous" }).click();
    await expect.poll(ids, { timeout: LIVE_MS }).toSatisfy((list: (string | null)[]) => list.length === 25 && list[0] === `${prefix}-01`);

    // Search by title.
    await page.getByLabel("Search id or title").fill("Paged item 17");
    await expect.poll(ids, { timeout: LIVE_MS }).toEqual([`${prefix}-17`]);

    // Stage filter: one of them is leased.
    const agent = await agentClient(`pager-${run}`);
    await agent.leases.claim.mutate({ workItemId: `${prefix}-05`, durationSeconds: 600 });
    await page.getByLabel("Search id or title").fill(prefix);
    await page.getByLabel("Stage").selectOption("leased");
    await expect.poll(ids, { timeout: LIVE_MS }).toEqual([`${prefix}-05`]);
    expect(new URL(page.url()).searchParams.get("stage")).toBe("leased");
    await page.close();
  });

  it("item page: notes and the event log, newest first, 50 at a time; Older adds the next page below; a new note goes on top", async () => {
    const itemId = `paged-notes-${run}`;
    const agent = await agentClient(`pager-notes-${run}`);
    await admin.workItems.create.mutate({ id: itemId, title: "An item with many notes" });
    const { lease } = (await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 600 }))!;
    const note = (index: number) => agent.leases.note.mutate({ leaseId: lease.id, epoch: lease.epoch, content: `note ${index}` });
    for (let index = 1; index <= 55; index++) await note(index);
    const newestFirst = (count: number) => Array.from({ length: count }, (_, index) => `note ${count - index}`);
    const eventsInApi = async () => (await admin.events.list.query({ workItemId: itemId, order: "desc", limit: 500 })).items.map((event) => event.sequence);

    const page = await context.newPage();
    await page.goto(`/items/${itemId}`);
    const notes = () => page.locator('[data-testid="notes"] .note-content').allTextContents();
    const sequences = () => page.locator('[data-testid="events"] tbody td[data-label="#"]').evaluateAll((cells) => cells.map((cell) => Number(cell.textContent)));
    await expect.poll(notes, { timeout: LIVE_MS }).toEqual(newestFirst(55).slice(0, 50));
    await page.getByRole("button", { name: "Older notes" }).click();
    await expect.poll(notes, { timeout: LIVE_MS }).toEqual(newestFirst(55));
    expect(await page.getByRole("button", { name: "Older notes" }).count()).toBe(0);

    const all = await eventsInApi();
    expect(all.length).toBeGreaterThan(50);
    await expect.poll(sequences, { timeout: LIVE_MS }).toEqual(all.slice(0, 50));
    await page.getByRole("button", { name: "Older events" }).click();
    await expect.poll(sequences, { timeout: LIVE_MS }).toEqual(all);
    expect(await page.getByRole("button", { name: "Older events" }).count()).toBe(0);

    // Live, with both pages loaded: the new note and its event go on top; nothing is repeated or lost.
    await note(56);
    await expect.poll(notes, { timeout: LIVE_MS }).toEqual(newestFirst(56));
    await expect.poll(sequences, { timeout: LIVE_MS }).toEqual(await eventsInApi());
    await page.close();
  });
});
