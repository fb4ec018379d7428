import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedShowcase } from "./seed";
import { admin, agentClient, baseURL, DESKTOP, launchBrowser, newToken, PHONE, run, screenshot, settled } from "./support";

/*
 * Issue 23 item 10: only user-written text (titles, descriptions, notes, questions, answers) may
 * break anywhere. Headers, times, ids, event types and actors never break inside a word: the
 * column sizes to them, or they are cut with an ellipsis and carry the full text on hover.
 * Measured in the rendered page: every word of such a text lies on one line (Range client
 * rects), on every dashboard page at a laptop and a phone width, next to hostile user text
 * (long unbroken words) that squeezes the other columns as hard as it can.
 */

let browser: Browser;
let receiver: http.Server;
let ids: Awaited<ReturnType<typeof seedShowcase>>["ids"];
const hostileId = `hostile-${run}`;
const longWorker = `agent-with-a-rather-long-name-${run}`;
const longWord = "W".repeat(300);

beforeAll(async () => {
  browser = await launchBrowser();
  receiver = http.createServer((_request, response) => response.writeHead(500).end("not today"));
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  ({ ids } = await seedShowcase());

  // An item made by the admin token (actor admin:WORK_GRAPH_ADMIN_TOKEN), with hostile text everywhere
  // a person or an agent writes, neighbours with long ids for the graph, and a worker with a long id.
  const blocker = `a-blocker-whose-id-is-longer-than-a-graph-node-${run}`;
  const dependent = `a-dependent-whose-id-is-longer-than-a-graph-node-${run}`;
  await admin.workItems.create.mutate({ id: blocker, title: `Blocker ${longWord}` });
  await admin.workItems.create.mutate({ id: hostileId, title: `Hostile ${longWord}`, description: `${longWord} ${longWord}`, priority: 800_000 });
  await admin.workItems.create.mutate({ id: dependent, title: "Waits for the hostile item", dependsOn: [hostileId] });
  const agent = await agentClient(longWorker);
  const claimed = (await agent.leases.claim.mutate({ workItemId: hostileId, durationSeconds: 600 }))!;
  await agent.leases.note.mutate({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, content: `${longWord} note` });
  const asked = await agent.attention.request.mutate({
    leaseId: claimed.lease.id,
    epoch: claimed.lease.epoch,
    kind: "decision",
    question: `Ship ${longWord}?`,
    context: longWord,
    options: ["yes", longWord],
    blocking: false,
  });
  await admin.attention.resolve.mutate({ id: asked.request.id, resolution: `${longWord} answered` });
  await agent.attention.request.mutate({ leaseId: claimed.lease.id, epoch: claimed.lease.epoch, kind: "help", question: `Still ${longWord}?`, blocking: false });
  await admin.workItems.addDependency.mutate({ workItemId: hostileId, dependsOnId: blocker });
  await admin.workers.drain.mutate({ workerId: longWorker, reason: `${longWord} reason` });

  // Queue policy: a limit, and a scheduled and an unroutable item with long capabilities and keys.
  const longKey = `a-concurrency-key-with-a-long-name-${run}`;
  await admin.limits.set.mutate({ key: longKey, maxLeases: 3 });
  await admin.workItems.create.mutate({ id: `later-${run}`, title: `Later ${longWord}`, requires: [`a-capability-with-a-long-name-${run}`], concurrencyKey: longKey, delaySeconds: 3600 });
  await admin.workItems.create.mutate({ id: `nobody-${run}`, title: `Nobody ${longWord}`, requires: [`a-capability-nobody-has-with-a-long-name-${run}`], concurrencyKey: longKey });

  // A webhook whose deliveries fail, so the webhooks page has both of its tables.
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook-${run}-${longWord}`;
  const hook = await admin.webhooks.create.mutate({ url, events: ["work_item.*"], format: "json", label: `Hook ${"W".repeat(150)}` });
  await admin.webhooks.test.mutate({ id: hook.id });
});
afterAll(async () => {
  await browser?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** Texts that are not written by a person or an agent: each of their words must stay on one line. */
const TOKEN_TEXT = [
  "th",
  "dt",
  "time",
  ".id",
  ".worker",
  ".token",
  ".countdown",
  'td[data-label="#"]',
  'td[data-label="Time"]',
  'td[data-label="Event"]',
  'td[data-label="Actor"]',
  'td[data-label="Epoch"]',
  'td[data-label="Priority"]',
  'td[data-kind="token"]',
].join(", ");

interface Broken {
  selector: string;
  word: string;
  lines: number;
}

/** Every word (run of non-space characters) of every visible token text that the browser laid out on more than one line. */
function brokenWords(page: Page): Promise<{ checked: number; broken: Broken[]; texts: string[] }> {
  return page.evaluate((selector) => {
    const hidden = (element: Element) => {
      for (let at: Element | null = element; at; at = at.parentElement) {
        const style = getComputedStyle(at);
        if (style.display === "none" || style.visibility === "hidden" || style.clip === "rect(0px, 0px, 0px, 0px)") return true;
      }
      return false;
    };
    const describe = (element: Element) => `${element.tagName.toLowerCase()}${element.className ? `.${String(element.className).trim().replace(/\s+/g, ".")}` : ""}${element.getAttribute("data-label") ? `[${element.getAttribute("data-label")}]` : ""}`;
    const broken: { selector: string; word: string; lines: number }[] = [];
    const texts: string[] = [];
    let checked = 0;
    for (const element of document.querySelectorAll(selector)) {
      if (hidden(element)) continue;
      checked++;
      texts.push(element.textContent ?? "");
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
        for (const match of node.data.matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, match.index);
          range.setEnd(node, match.index + match[0].length);
          const lines = new Set([...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.top))).size;
          if (lines > 1) broken.push({ selector: describe(element), word: match[0].slice(0, 60), lines });
        }
      }
    }
    return { checked, broken, texts };
  }, TOKEN_TEXT);
}

/**
 * Every id drawn in the neighbourhood graph is inside its node's box, or cut with an ellipsis by
 * an element whose title (the hover text) is the whole id.
 */
function cutGraphIds(page: Page, centerId: string): Promise<{ checked: number; cut: string[] }> {
  return page.evaluate((center) => {
    const graph = document.querySelector('[data-testid="neighbourhood-graph"]');
    if (!graph) return { checked: 0, cut: ["no graph"] };
    const cut: string[] = [];
    let checked = 0;
    for (const group of graph.querySelectorAll("g.node")) {
      const link = group.closest("a");
      const id = link ? decodeURIComponent(link.getAttribute("href")!.replace("/items/", "")) : center;
      const box = group.querySelector(":scope > rect[rx]")!.getBoundingClientRect();
      const walker = document.createTreeWalker(group, NodeFilter.SHOW_TEXT);
      let found = false;
      for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
        const at = node.data.indexOf(id);
        if (at < 0) continue;
        found = true;
        checked++;
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + id.length);
        const drawn = range.getBoundingClientRect();
        if (drawn.left >= box.left - 1 && drawn.right <= box.right + 1) continue;
        const holder = node.parentElement!;
        const shown = holder.getBoundingClientRect();
        const ellipsis = getComputedStyle(holder).textOverflow === "ellipsis";
        if (!(ellipsis && holder.getAttribute("title") === id && shown.right <= box.right + 1)) cut.push(id);
      }
      if (!found) cut.push(`${id} (not drawn)`);
    }
    return { checked, cut };
  }, centerId);
}

async function adminContext(viewport: { width: number; height: number }): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL, viewport });
  const response = await context.request.post("/api/session", { data: { token: await newToken("admin") }, headers: { "x-work-graph-csrf": "1" } });
  if (!response.ok()) throw new Error(`login failed: ${response.status()}`);
  return context;
}

const pages = () => [
  { name: "overview", path: "/", heading: "Overview" },
  { name: "items", path: `/items?q=${run}`, heading: "Items" },
  { name: "item-hostile", path: `/items/${hostileId}`, heading: `Hostile ${longWord}` },
  { name: "item-parent", path: `/items/${ids.parent}`, heading: "Launch the CSV importer" },
  { name: "leases", path: "/leases", heading: "Leases" },
  { name: "workers", path: "/workers", heading: "Workers" },
  { name: "attention", path: "/attention", heading: "Attention inbox" },
  { name: "attention-resolved", path: "/attention?tab=resolved", heading: "Attention inbox" },
  { name: "activity", path: "/activity", heading: "Activity" },
  { name: "webhooks", path: "/webhooks", heading: "Webhooks" },
  { name: "limits", path: "/limits", heading: "Limits" },
  { name: "unroutable", path: "/unroutable", heading: "Unroutable items" },
];

describe.each([
  { device: "desktop", viewport: DESKTOP },
  { device: "phone", viewport: PHONE },
])("readable text at $device width ($viewport.width px)", ({ device, viewport }) => {
  it("no header, time, id, event type or actor breaks inside a word, and no page widens, next to hostile user text", async () => {
    const context = await adminContext(viewport);
    const page = await context.newPage();
    const problems: Record<string, unknown> = {};
    for (const { name, path, heading } of pages()) {
      await page.goto(path);
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
      await settled(page);
      // Text that never breaks must not widen the page instead.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      if (overflow > 1) problems[`${name}: horizontal overflow`] = overflow;
      const { checked, broken, texts } = await brokenWords(page);
      if (checked === 0) problems[`${name}: nothing measured`] = checked;
      if (broken.length > 0) problems[name] = broken;
      if (name === "item-hostile") {
        // The event log shows what this test is about: long event types and the admin's actor.
        const log = texts.join(" ");
        for (const expected of ["attention.requested", "work_item.created", "admin:WORK_GRAPH_ADMIN_TOKEN", longWorker]) {
          if (!log.includes(expected)) problems[`${name}: ${expected} not measured`] = true;
        }
        const graph = await cutGraphIds(page, hostileId);
        if (graph.checked < 2) problems[`${name}: graph ids measured`] = graph.checked;
        if (graph.cut.length > 0) problems[`${name}: graph ids cut off`] = graph.cut;
      }
      if (name === "overview" || name === "item-hostile") await screenshot(page, `readable-${name}-${device}`);
    }
    expect(problems, JSON.stringify(problems, null, 2)).toEqual({});
    await context.close();
  });
});

describe("cut tokens", () => {
  it("a worker id too long for its column ends in an ellipsis and shows whole on hover", async () => {
    const context = await adminContext(PHONE);
    const page = await context.newPage();
    await page.goto("/workers");
    await page.getByRole("heading", { level: 1, name: "Workers" }).waitFor();
    const cell = page.locator(`tr[data-worker-id="${longWorker}"] td[data-label="Worker"]`);
    const holder = cell.locator(`[title="${longWorker}"]`);
    expect(await holder.textContent()).toBe(longWorker);
    const shown = await holder.evaluate((element) => ({ scroll: element.scrollWidth, client: element.clientWidth, overflow: getComputedStyle(element).textOverflow }));
    expect(shown.overflow).toBe("ellipsis");
    expect(shown.scroll).toBeGreaterThan(shown.client); // really cut at 390 px
    await context.close();
  });
});
