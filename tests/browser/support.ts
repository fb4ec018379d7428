import AxeBuilder from "@axe-core/playwright";
import { createTRPCClient, httpLink } from "@trpc/client";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import type { AppRouter } from "../../server/trpc/root";

/*
 * Shared pieces of the browser tests. scripts/browser-tests.mjs starts the real app and
 * passes its URL, a known admin token and the Chromium binary.
 */

export function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the browser tests with \`node scripts/browser-tests.mjs\``);
  return value;
}

export const baseURL = required("WG_BASE_URL");
const adminToken = required("WG_ADMIN_TOKEN");
const chromiumPath = required("CHROMIUM_PATH");

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  "--disable-dev-shm-usage",
];

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** A short tag that makes this run's ids unique on the shared server. */
export const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS, headless: true });
}

export type ApiClient = ReturnType<typeof createTRPCClient<AppRouter>>;

/** A tRPC client over HTTP with a bearer token: what an agent or a script uses. */
export function apiClient(token: string): ApiClient {
  return createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${baseURL}/api/trpc`, headers: () => ({ authorization: `Bearer ${token}` }) })],
  });
}

export const admin = apiClient(adminToken);

export async function newToken(role: "agent" | "operator" | "admin", workerId?: string): Promise<string> {
  const { token } = await admin.tokens.create.mutate({ role, workerId, label: `browser-${role}-${workerId ?? run}` });
  return token;
}

export async function agentClient(workerId: string): Promise<ApiClient> {
  return apiClient(await newToken("agent", workerId));
}

let operatorToken: string | undefined;
export async function operatorTokenOnce(): Promise<string> {
  operatorToken ??= await newToken("operator");
  return operatorToken;
}

/** A browser context already signed in as an operator (through the real /api/session endpoint). */
export async function operatorContext(browser: Browser, viewport = DESKTOP): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL, viewport });
  const response = await context.request.post("/api/session", {
    data: { token: await operatorTokenOnce() },
    headers: { "x-work-graph-csrf": "1" },
  });
  if (!response.ok()) throw new Error(`login failed: ${response.status()} ${await response.text()}`);
  return context;
}

/** Waits until no "Loading …" placeholder is left on the page. */
export async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelectorAll('[aria-busy="true"]').length === 0, undefined, { timeout: 15_000 });
}

export const screenshotDir = path.resolve(import.meta.dirname, "../../test-results/screenshots");

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const file = path.join(screenshotDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** axe-core on the page: serious and critical violations (each with the offending selectors). */
export async function seriousViolations(page: Page) {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.slice(0, 5).map((node) => node.target.join(" ")),
    }));
}

/**
 * How long a change pushed over events.stream may take to show on an open page: a third of the
 * fallback poll (POLL_MS, 15 s), so a page that only polls still fails most such checks (live.test.ts
 * proves the push alone), yet generous enough for a loaded 2-core CI machine.
 */
export const LIVE_MS = 5_000;

/** The attribute of the first element matching `selector`, or null when there is none (never waits: for `expect.poll`). */
export async function attributeNow(page: Page, selector: string, name: string): Promise<string | null> {
  return page.evaluate(([sel, attr]) => document.querySelector(sel!)?.getAttribute(attr!) ?? null, [selector, name] as const);
}

/** Text of the first element matching `selector`, or null when there is none (never waits: for `expect.poll`). */
export async function textNow(page: Page, selector: string): Promise<string | null> {
  return page.evaluate((sel) => document.querySelector(sel)?.textContent ?? null, selector);
}
