import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext } from "playwright-core";
import { admin, agentClient, attributeNow, launchBrowser, operatorContext, run, seriousViolations } from "./support";

/*
 * Operator control in the dashboard: revoke a lease (the worker's next call is fenced), drain a
 * worker (its next claim is refused), and a poison item that reaches the inbox by itself.
 */

let browser: Browser;
let context: BrowserContext;
beforeAll(async () => {
  browser = await launchBrowser();
  context = await operatorContext(browser);
});
afterAll(() => browser?.close());

/** The tRPC error's reason and detail, from a rejected call over HTTP. */
async function refusalOf(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    const data = (error as { data?: { reason?: string; detail?: Record<string, unknown> } }).data;
    return { reason: data?.reason, detail: data?.detail ?? {} };
  }
  throw new Error("expected the call to be refused");
}

describe("operator control", () => {
  it("revoke from the leases page: asks for a reason, the worker's next call is fenced as revoked, the item page shows who and why", async () => {
    const worker = `runaway-${run}`;
    const itemId = `revoke-me-${run}`;
    const reason = `Stuck in a loop (${run})`;
    const agent = await agentClient(worker);
    await admin.workItems.create.mutate({ id: itemId, title: "A task the agent got stuck on" });
    const { lease } = (await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 900 }))!;

    const page = await context.newPage();
    await page.goto("/leases");
    const row = page.locator(`[data-testid="active-leases"] tr[data-lease-id="${lease.id}"]`);
    await row.waitFor();
    await row.getByRole("button", { name: `Revoke ${worker}'s lease on ${itemId}` }).click();
    const form = row.getByTestId("revoke-form");
    const submit = form.getByRole("button", { name: "Revoke lease" });
    expect(await submit.isDisabled()).toBe(true); // a reason is required
    await form.getByLabel(/Why revoke/).fill(reason);
    await submit.click();

    await expect.poll(() => attributeNow(page, `[data-testid="recent-leases"] tr[data-lease-id="${lease.id}"] [data-outcome]`, "data-outcome"), { timeout: 5_000 }).toBe("revoked");
    expect(await page.locator(`[data-testid="active-leases"] tr[data-lease-id="${lease.id}"]`).count()).toBe(0);

    // The worker's next call is fenced, with the reason.
    const fenced = await refusalOf(agent.leases.renew.mutate({ leaseId: lease.id, epoch: lease.epoch, durationSeconds: 900 }));
    expect(fenced).toMatchObject({ reason: "LEASE_NOT_CURRENT", detail: { kind: "revoked", reason } });

    // The item page: the lease history says revoked, by whom and why; the item is ready again.
    await page.goto(`/items/${itemId}`);
    const entry = page.locator(`[data-testid="lease-history"] [data-epoch="1"]`);
    await entry.waitFor();
    expect(await entry.getAttribute("data-outcome")).toBe("revoked");
    const revocation = entry.getByTestId("revocation").filter({ hasText: reason });
    await revocation.waitFor({ timeout: 5_000 });
    expect(await revocation.textContent()).toMatch(/Revoked by operator:/);
    expect(await attributeNow(page, '[data-testid="stage-reason"] [data-stage]', "data-stage")).toBe("ready");
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });

  it("revoke from the item page", async () => {
    const worker = `item-runaway-${run}`;
    const itemId = `revoke-item-${run}`;
    const agent = await agentClient(worker);
    await admin.workItems.create.mutate({ id: itemId, title: "Revoked from its own page" });
    const { lease } = (await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 900 }))!;
    const page = await context.newPage();
    await page.goto(`/items/${itemId}`);
    await page.getByRole("button", { name: `Revoke ${worker}'s lease on ${itemId}` }).click();
    await page.getByLabel(/Why revoke/).fill("Needs a human decision first");
    await page.getByRole("button", { name: "Revoke lease" }).click();
    await expect.poll(() => attributeNow(page, `[data-testid="lease-history"] [data-epoch="1"]`, "data-outcome"), { timeout: 5_000 }).toBe("revoked");
    expect((await admin.leases.get.query({ leaseId: lease.id })).outcome).toBe("revoked");
    await page.close();
  });

  it("drain from the workers page: the worker's next claim is refused; its held lease keeps working; undrain", async () => {
    const worker = `drainee-${run}`;
    const agent = await agentClient(worker);
    await admin.workItems.create.mutate({ id: `drain-held-${run}`, title: "Held while drained" });
    await admin.workItems.create.mutate({ id: `drain-next-${run}`, title: "Not for a drained worker" });
    const { lease } = (await agent.leases.claim.mutate({ workItemId: `drain-held-${run}`, durationSeconds: 900 }))!;

    const page = await context.newPage();
    await page.goto("/workers");
    const row = page.locator(`[data-testid="workers"] tr[data-worker-id="${worker}"]`);
    await row.waitFor();
    expect(await row.locator(".live-leases").textContent()).toBe("1");
    expect(await row.getAttribute("data-drained")).toBe("false");
    await row.getByRole("button", { name: `Drain ${worker}` }).click();
    await row.getByLabel(/Reason/).fill("Rolling out a new model");
    await row.getByRole("button", { name: `Drain ${worker}` }).click();
    await expect.poll(() => row.getAttribute("data-drained"), { timeout: 5_000 }).toBe("true");
    expect(await row.locator(".worker-state").textContent()).toContain("Rolling out a new model");

    const refused = await refusalOf(agent.leases.claim.mutate({ workItemId: `drain-next-${run}`, durationSeconds: 60 }));
    expect(refused).toMatchObject({ reason: "WORKER_DRAINED", detail: { reason: "Rolling out a new model" } });
    await agent.leases.release.mutate({ leaseId: lease.id, epoch: lease.epoch, evidence: "finished what it held" });
    // The worker's name leads to its leases.
    expect(await row.getByRole("link", { name: worker }).getAttribute("href")).toBe(`/leases?worker=${worker}`);
    expect(await seriousViolations(page)).toEqual([]);

    await row.getByRole("button", { name: `Undrain ${worker}` }).click();
    await expect.poll(() => row.getAttribute("data-drained"), { timeout: 5_000 }).toBe("false");
    expect((await agent.leases.claim.mutate({ workItemId: `drain-next-${run}`, durationSeconds: 60 }))?.lease.workerId).toBe(worker);
    await page.close();
  });

  it("a poison item whose leases expire three times reaches the inbox with a help request from work-graph", async () => {
    const itemId = `poison-${run}`;
    const workers = [await agentClient(`crashy-a-${run}`), await agentClient(`crashy-b-${run}`), await agentClient(`crashy-c-${run}`)];
    await admin.workItems.create.mutate({ id: itemId, title: "The item that crashes every agent" });
    const page = await context.newPage();
    await page.goto("/attention");
    await page.getByRole("heading", { level: 1, name: "Attention inbox" }).waitFor();

    for (const agent of workers) {
      await expect.poll(async () => (await admin.workItems.get.query({ id: itemId })).stage, { timeout: 10_000 }).toBe("ready");
      await agent.leases.claim.mutate({ workItemId: itemId, durationSeconds: 1 });
    }
    // The third lease lapses; the sweep (every 250 ms here) records it and opens the request.
    let open: Awaited<ReturnType<typeof admin.attention.list.query>> | undefined;
    await expect.poll(async () => (open = await admin.attention.list.query({ status: "open", workItemId: itemId })).items, { timeout: 10_000 }).toHaveLength(1);
    const request = open!.items[0]!;
    expect(request).toMatchObject({ kind: "help", workerId: "work-graph", blocking: true, options: ["retry", "cancel"] });
    const card = page.locator(`[data-request-id="${request.id}"]`);
    await card.waitFor({ state: "attached", timeout: 3_000 });
    const text = (await card.textContent()) ?? "";
    for (const expected of ["help", "work-graph", `crashy-a-${run}`, `crashy-c-${run}`, "The item that crashes every agent"]) expect(text).toContain(expected);
    await card.getByRole("radio", { name: "retry" }).waitFor();
    await card.getByRole("radio", { name: "cancel" }).waitFor();
    expect((await admin.workItems.get.query({ id: itemId })).stage).toBe("needs_attention");

    // Overview: expired and revoked are counted apart.
    await page.goto("/");
    await expect.poll(async () => Number(await page.getByTestId("ended-expired").locator(".outcome-count-n").textContent()), { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    const revoked = Number(await page.getByTestId("ended-revoked").locator(".outcome-count-n").textContent());
    expect(revoked).toBeGreaterThanOrEqual(2); // the two revocations above
    await page.close();
  });
});
