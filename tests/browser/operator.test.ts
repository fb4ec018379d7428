import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext } from "playwright-core";
import { admin, agentClient, attributeNow, eventually, launchBrowser, LIVE_MS, operatorContext, run, textNow } from "./support";

/* Operators change the graph from the UI: create, dependencies, priority, cancel; refusals show their reason. */

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
    await eventually(() => textNow(page, '[data-testid="item-priority"]'), (text) => text === "9", LIVE_MS);
    expect((await admin.workItems.get.query({ id: itemId })).priority).toBe(9);

    // A dependency on an item that does not exist: NOT_FOUND, shown.
    const dependency = page.getByLabel(/Add a dependency/);
    await dependency.fill(`no-such-item-${run}`);
    await page.getByRole("button", { name: "Add dependency" }).click();
    await page.getByRole("alert").getByText("NOT_FOUND").waitFor();

    // A real one: the item becomes blocked, and the page says by what.
    await dependency.fill(blockerId);
    await page.getByRole("button", { name: "Add dependency" }).click();
    await eventually(() => attributeNow(page, '[data-testid="stage-reason"] [data-stage]', "data-stage"), (s) => s === "blocked", LIVE_MS);
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
    await eventually(() => attributeNow(page, '[data-testid="stage-reason"] [data-stage]', "data-stage"), (s) => s === "ready", LIVE_MS);
    expect((await admin.workItems.get.query({ id: itemId })).dependsOn).toEqual([]);

    // Cancelling a leased item is refused (no pre-emption): ITEM_LEASED.
    const agent = await agentClient(`op-agent-${run}`);
    const claimed = await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 600 });
    await eventually(() => attributeNow(page, '[data-testid="stage-reason"] [data-stage]', "data-stage"), (s) => s === "leased", LIVE_MS);
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
    await eventually(() => attributeNow(page, '[data-testid="stage-reason"] [data-stage]', "data-stage"), (s) => s === "cancelled", LIVE_MS);
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
    await eventually(ids, (list) => list.length === 25 && list.every((id) => id?.startsWith(prefix)), LIVE_MS);
    expect(new URL(page.url()).searchParams.get("q")).toBe(prefix);
    await page.getByRole("button", { name: "Next" }).click();
    await eventually(ids, (list) => list.length === 2 && list[0] === `${prefix}-26`, LIVE_MS);
    expect(await page.getByRole("button", { name: "Next" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Previous" }).click();
    await eventually(ids, (list) => list.length === 25 && list[0] === `${prefix}-01`, LIVE_MS);

    // Search by title.
    await page.getByLabel("Search id or title").fill("Paged item 17");
    await eventually(ids, (list) => list.length === 1 && list[0] === `${prefix}-17`, LIVE_MS);

    // Stage filter: one of them is leased.
    const agent = await agentClient(`pager-${run}`);
    await agent.leases.claim.mutate({ workItemId: `${prefix}-05`, durationSeconds: 600 });
    await page.getByLabel("Search id or title").fill(prefix);
    await page.getByLabel("Stage").selectOption("leased");
    await eventually(ids, (list) => list.length === 1 && list[0] === `${prefix}-05`, LIVE_MS);
    expect(new URL(page.url()).searchParams.get("stage")).toBe("leased");
    await page.close();
  });
});
