import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, apiClient, LIVE_MS, launchBrowser, operatorContext, run, settled, textNow } from "./support";

/*
 * Issue 24 item 7: the dashboard speaks the queue policy. Projects (a switcher remembered in the
 * URL that filters every list and count), an item's project, requires, concurrency key and
 * notBefore, the scheduled stage with its time to go, the Limits page, workers' capabilities and
 * the overview's unroutable items with the capabilities nobody has.
 */

let browser: Browser;
const alpha = `alpha-${run}`;
const beta = `beta-${run}`;
const browserCapability = `browser:${run}`;
const quantum = `quantum:${run}`;
const stagingKey = `staging-db-${run}`;
const workerId = `capable-${run}`;
const ids = {
  scheduled: `later-${run}`,
  leased: `leased-${run}`,
  needsQuantum: `needs-quantum-${run}`,
  needsBoth: `needs-both-${run}`,
  beta: `beta-item-${run}`,
  betaLeased: `beta-leased-${run}`,
};
/** A delay that reads "in 4 min" for the first 50 s after the item is made. */
const DELAY_SECONDS = 290;

beforeAll(async () => {
  browser = await launchBrowser();
  await admin.projects.create.mutate({ id: alpha, name: `Alpha ${run}` });
  await admin.projects.create.mutate({ id: beta, name: `Beta ${run}` });
  const { token } = await admin.tokens.create.mutate({ role: "agent", workerId, label: `browser-${workerId}`, capabilities: [browserCapability, `git:${run}`] });
  const worker = apiClient(token);

  await admin.workItems.create.mutate({
    id: ids.scheduled,
    title: "Deploy after the freeze",
    projectId: alpha,
    requires: [browserCapability],
    concurrencyKey: stagingKey,
    delaySeconds: DELAY_SECONDS,
  });
  await admin.workItems.create.mutate({ id: ids.leased, title: "Run the staging smoke test", projectId: alpha, requires: [browserCapability], concurrencyKey: stagingKey });
  await worker.leases.claim.mutate({ workItemId: ids.leased, durationSeconds: 600 });
  // No agent token has `quantum`; the second item's `browser` is covered, so only `quantum` is missing.
  await admin.workItems.create.mutate({ id: ids.needsQuantum, title: "Factor the big number", projectId: alpha, requires: [quantum] });
  await admin.workItems.create.mutate({ id: ids.needsBoth, title: "Render the quantum page", projectId: alpha, requires: [browserCapability, quantum] });
  await admin.workItems.create.mutate({ id: ids.beta, title: "Beta's open item", projectId: beta });
  // A live lease in the other project, which a filtered lease list must leave out.
  await admin.workItems.create.mutate({ id: ids.betaLeased, title: "Beta's leased item", projectId: beta });
  const betaWorker = apiClient((await admin.tokens.create.mutate({ role: "agent", workerId: `beta-worker-${run}`, label: `browser-beta-${run}` })).token);
  await betaWorker.leases.claim.mutate({ workItemId: ids.betaLeased, durationSeconds: 600 });
});
afterAll(() => browser?.close());

const projectInUrl = (page: Page) => new URL(page.url()).searchParams.get("project");

async function itemRowIds(page: Page): Promise<string[]> {
  return page.locator('[data-testid="items-table"] tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute("data-item-id") ?? ""));
}

describe("items", () => {
  it("show project, requires, concurrency key, notBefore and the scheduled stage with its time to go", async () => {
    const context = await operatorContext(browser);
    const page = await context.newPage();
    await page.goto(`/items?q=${run}&stage=scheduled`);
    await page.getByRole("heading", { level: 1, name: "Items" }).waitFor();
    expect(await page.getByLabel("Stage").locator("option").allTextContents()).toContain("scheduled");
    const row = page.locator(`[data-testid="items-table"] tr[data-item-id="${ids.scheduled}"]`);
    await row.waitFor();
    expect(await itemRowIds(page)).toEqual([ids.scheduled]);
    expect(await row.locator('td[data-label="Stage"]').textContent()).toBe("scheduled in 4 min");
    expect(await row.locator('td[data-label="Project"]').textContent()).toBe(alpha);
    expect(await row.locator('td[data-label="Requires"]').textContent()).toBe(browserCapability);
    expect(await row.locator('td[data-label="Key"]').textContent()).toBe(stagingKey);
    const notBefore = await row.locator('td[data-label="Not before"] time').getAttribute("datetime");
    expect(Date.parse(notBefore!)).toBeGreaterThan(Date.now());

    await row.getByRole("link", { name: "Deploy after the freeze" }).click();
    await page.getByRole("heading", { level: 1, name: "Deploy after the freeze" }).waitFor();
    await settled(page);
    expect(await page.getByTestId("item-project").textContent()).toBe(alpha);
    expect(await page.getByTestId("item-requires").textContent()).toBe(browserCapability);
    expect(await page.getByTestId("item-concurrency-key").textContent()).toBe(stagingKey);
    expect(await page.getByTestId("item-not-before").locator("time").getAttribute("datetime")).toBe(notBefore);
    expect(await page.locator(".facts .stage-with-time").textContent()).toBe("scheduled in 4 min");
    const reason = await page.getByTestId("stage-reason").textContent();
    expect(reason).toContain("Scheduled: not claimable before");
    expect(reason).toContain("(in 4 min)");

    // An item without any of them.
    await page.goto(`/items/${ids.beta}`);
    await page.getByRole("heading", { level: 1, name: "Beta's open item" }).waitFor();
    expect(await page.getByTestId("item-project").textContent()).toBe(beta);
    expect(await page.getByTestId("item-requires").textContent()).toBe("nothing");
    expect(await page.getByTestId("item-concurrency-key").textContent()).toBe("—");
    expect(await page.getByTestId("item-not-before").textContent()).toBe("—");
    await context.close();
  });
});

describe("project switcher", () => {
  it("filters lists and counts, is remembered in the URL and carried from page to page", async () => {
    const context = await operatorContext(browser);
    const page = await context.newPage();
    await page.goto(`/items?q=${run}`);
    await page.getByRole("heading", { level: 1, name: "Items" }).waitFor();
    const switcher = page.getByLabel("Project");
    // An unscoped operator token: every project, and "All projects" first.
    expect(await switcher.inputValue()).toBe("");
    await expect.poll(() => switcher.locator("option").allTextContents()).toEqual(expect.arrayContaining(["All projects", `Alpha ${run} (${alpha})`, `Beta ${run} (${beta})`]));
    await expect.poll(() => itemRowIds(page)).toEqual(expect.arrayContaining([ids.scheduled, ids.beta]));

    await switcher.selectOption(alpha);
    await expect.poll(() => projectInUrl(page)).toBe(alpha);
    expect(new URL(page.url()).searchParams.get("q")).toBe(run); // the other filters stay
    await expect.poll(() => itemRowIds(page)).not.toContain(ids.beta);
    expect(await itemRowIds(page)).toEqual(expect.arrayContaining([ids.scheduled, ids.leased, ids.needsQuantum, ids.needsBoth]));

    // Carried across navigation: the nav links and a page reached without the parameter.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    await expect.poll(() => projectInUrl(page)).toBe(alpha);
    await expect.poll(() => textNow(page, '[data-testid="stage-count-scheduled"] .stage-card-count')).toBe("1");
    await expect.poll(() => textNow(page, '[data-testid="stage-count-leased"] .stage-card-count')).toBe("1");
    await expect.poll(() => textNow(page, '[data-testid="stage-count-ready"] .stage-card-count')).toBe("2");
    await page.goto(`/leases?project=${alpha}`);
    await page.getByRole("heading", { level: 1, name: "Leases" }).waitFor();
    await page.locator(`[data-testid="active-leases"] tr[data-item-id="${ids.leased}"]`).waitFor();
    expect(await page.locator(`[data-testid="active-leases"] tr[data-item-id="${ids.betaLeased}"]`).count()).toBe(0);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Items" }).click();
    await page.getByRole("heading", { level: 1, name: "Items" }).waitFor();
    await expect.poll(() => projectInUrl(page)).toBe(alpha);
    expect(await page.getByLabel("Project").inputValue()).toBe(alpha);

    // A reload keeps it (the URL is the memory); another project and then all of them.
    await page.goto(`/items?q=${run}&project=${beta}`);
    await page.getByRole("heading", { level: 1, name: "Items" }).waitFor();
    expect(await page.getByLabel("Project").inputValue()).toBe(beta);
    await expect.poll(async () => (await itemRowIds(page)).sort()).toEqual([ids.beta, ids.betaLeased].sort());
    await page.getByLabel("Project").selectOption("");
    await expect.poll(() => projectInUrl(page)).toBeNull();
    await expect.poll(() => itemRowIds(page)).toEqual(expect.arrayContaining([ids.scheduled, ids.beta]));
    await context.close();
  });
});

describe("limits", () => {
  it("an operator sets, edits and deletes a limit (with a confirmation); live leases are counted", async () => {
    const context = await operatorContext(browser);
    const page = await context.newPage();
    await page.goto("/");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Limits" }).click();
    await page.getByRole("heading", { level: 1, name: "Limits" }).waitFor();
    await settled(page);

    await page.getByLabel("Concurrency key").fill(stagingKey);
    await page.getByLabel("Max live leases").fill("2");
    await page.getByRole("button", { name: "Set limit" }).click();
    const row = page.locator(`[data-testid="limits"] tr[data-limit-key="${stagingKey}"]`);
    await row.waitFor();
    expect(await row.locator('td[data-label="Key"]').textContent()).toBe(stagingKey);
    expect(await row.locator('td[data-label="Limit"]').textContent()).toBe("2");
    expect(await row.locator('td[data-label="Live leases"]').textContent()).toBe("1"); // the worker's lease on the staging item
    expect(await row.locator('td[data-label="State"]').textContent()).toBe("room for 1");
    expect(await row.locator('td[data-label="Updated"] time').count()).toBe(1);
    expect((await admin.limits.list.query({})).find((limit) => limit.key === stagingKey)?.maxLeases).toBe(2);

    await row.getByRole("button", { name: `Edit the limit on ${stagingKey}` }).click();
    await row.getByLabel(`Max live leases for ${stagingKey}`).fill("1");
    await row.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => row.locator('td[data-label="Limit"]').textContent(), { timeout: LIVE_MS }).toBe("1");
    expect(await row.locator('td[data-label="State"]').textContent()).toBe("full");

    await row.getByRole("button", { name: `Delete the limit on ${stagingKey}…` }).click();
    await row.getByText(`Delete the limit on ${stagingKey}? The key becomes unlimited.`).waitFor();
    await row.getByRole("button", { name: "Keep it" }).click(); // the confirmation can be declined
    expect(await row.count()).toBe(1);
    await row.getByRole("button", { name: `Delete the limit on ${stagingKey}…` }).click();
    await row.getByRole("button", { name: "Delete limit" }).click();
    await row.waitFor({ state: "detached" });
    expect((await admin.limits.list.query({})).some((limit) => limit.key === stagingKey)).toBe(false);
    await context.close();
  });

  it("a refused limit shows the API's reason next to the form", async () => {
    const context = await operatorContext(browser);
    const page = await context.newPage();
    await page.goto("/limits");
    await page.getByRole("heading", { level: 1, name: "Limits" }).waitFor();
    // The browser's own check would stop an invalid key; the server's answer must show too.
    await page.getByLabel("Concurrency key").evaluate((input) => input.removeAttribute("pattern"));
    await page.getByLabel("Concurrency key").fill("Not A Key");
    await page.getByRole("button", { name: "Set limit" }).click();
    await expect.poll(() => textNow(page, '[role="alert"] .reason'), { timeout: LIVE_MS }).toBe("VALIDATION");
    await context.close();
  });
});

describe("workers", () => {
  it("each worker shows the capabilities of its agent tokens", async () => {
    const context = await operatorContext(browser);
    const page = await context.newPage();
    await page.goto("/workers");
    await page.getByRole("heading", { level: 1, name: "Workers" }).waitFor();
    const cell = page.locator(`tr[data-worker-id="${workerId}"] td[data-label="Capabilities"]`);
    await cell.waitFor();
    expect(await cell.locator("code").allTextContents()).toEqual([browserCapability, `git:${run}`].sort());
    await context.close();
  });
});

describe("unroutable items", () => {
  it("the overview counts them and says what they need; the link lists each with its missing capabilities", async () => {
    const context = await operatorContext(browser);
    const page = await context.newPage();
    await page.goto(`/?project=${alpha}`);
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    const callout = page.getByTestId("unroutable-callout");
    await expect.poll(() => callout.textContent(), { timeout: LIVE_MS }).toBe(`2 ready items: no agent can take these: they need ${quantum}. Show the unroutable items`);

    await callout.getByRole("link", { name: "Show the unroutable items" }).click();
    await page.getByRole("heading", { level: 1, name: "Unroutable items" }).waitFor();
    // The link names no project: the chosen one is carried over.
    await expect.poll(() => projectInUrl(page)).toBe(alpha);
    const rows = page.locator('[data-testid="unroutable"] tbody tr');
    await rows.first().waitFor();
    expect((await rows.evaluateAll((list) => list.map((row) => row.getAttribute("data-item-id")))).sort()).toEqual([ids.needsBoth, ids.needsQuantum].sort());
    const both = page.locator(`[data-testid="unroutable"] tr[data-item-id="${ids.needsBoth}"]`);
    expect(await both.locator('td[data-label="Requires"]').textContent()).toBe([browserCapability, quantum].sort().join(", "));
    expect(await both.locator('td[data-label="Why"]').textContent()).toBe(`needs ${quantum}`);

    // An operator changes what an item requires (and its key) on its page: it leaves the list.
    await both.getByRole("link", { name: "Render the quantum page" }).click();
    await page.getByRole("heading", { level: 1, name: "Render the quantum page" }).waitFor();
    await page.getByLabel("Requires").fill(browserCapability);
    await page.getByLabel("Concurrency key").fill(stagingKey);
    await page.getByRole("button", { name: "Save queue policy" }).click();
    await expect.poll(() => page.getByTestId("item-requires").textContent(), { timeout: LIVE_MS }).toBe(browserCapability);
    expect(await page.getByTestId("item-concurrency-key").textContent()).toBe(stagingKey);
    await page.goto(`/unroutable?project=${alpha}`);
    await page.getByRole("heading", { level: 1, name: "Unroutable items" }).waitFor();
    await expect.poll(() => rows.evaluateAll((list) => list.map((row) => row.getAttribute("data-item-id")))).toEqual([ids.needsQuantum]);

    // Another project has none: the callout goes away.
    await page.getByLabel("Project").selectOption(beta);
    await page.getByText("Every ready item can be taken by some agent.").waitFor();
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    await settled(page);
    await expect.poll(() => callout.count()).toBe(0);
    await context.close();
  });
});
