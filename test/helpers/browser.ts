// Debian's chromium driven by playwright-core, for the dashboard's end-to-end tests. Every
// page a test opens is watched: console errors and requests to any origin but the
// appliance's are collected (the tests assert there are none), and screenshots go to a
// temp dir whose path is printed, for CI to keep as artifacts.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";

export function chromiumAvailable(): boolean {
  const found = existsSync(CHROMIUM);
  if (!found && process.env.CI === "true") throw new Error("chromium is required in CI (.ci/run installs it)");
  return found;
}

export interface WatchedPage {
  page: Page;
  consoleErrors: string[];
  /** Requests to anything but `origin` (a CDN, a font, a tracker). */
  foreignRequests: string[];
}

export async function launchBrowser(): Promise<Browser> {
  // As root (CI), Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });
}

export async function watchedPage(
  browser: Browser,
  origin: string,
  opts: { colorScheme?: "light" | "dark"; viewport?: { width: number; height: number } } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({
    colorScheme: opts.colorScheme ?? "light",
    viewport: opts.viewport ?? { width: 1280, height: 800 },
  });
  const page = await context.newPage();
  const watched: WatchedPage = { page, consoleErrors: [], foreignRequests: [] };
  page.on("console", (m) => {
    // Chromium also logs each 4xx answer as an error; the dashboard expects those (401
    // before sign-in, 404 for another account's resource) and shows them. A 5xx stays.
    if (m.type() === "error" && !/^Failed to load resource: the server responded with a status of 4\d\d /.test(m.text()))
      watched.consoleErrors.push(m.text());
  });
  page.on("pageerror", (e) => watched.consoleErrors.push(e.message));
  page.on("request", (r) => {
    const url = r.url();
    if (!url.startsWith(origin + "/") && !url.startsWith("data:") && url !== "about:blank") watched.foreignRequests.push(url);
  });
  return watched;
}

const AXE_SOURCE = readFileSync(join(import.meta.dir, "../../node_modules/axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol: the dashboard's CSP (no inline script) stays on.
  await page.evaluate(AXE_SOURCE + "\n;undefined");
  // This function runs in the page (its `document`), not in Bun.
  const violations = await page.evaluate(async () => {
    const g = globalThis as unknown as {
      document: unknown;
      axe: {
        run(ctx: unknown, opts: object): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[] }>;
      };
    };
    const result = await g.axe.run(g.document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

let shotsDir: string | null = null;

/** Saves a full-page screenshot under the run's screenshot dir (printed once). */
export async function screenshot(page: Page, name: string): Promise<string> {
  if (!shotsDir) {
    shotsDir = process.env.POSTROOM_SCREENSHOTS ?? join(tmpdir(), `postroom-screenshots-${process.pid}`);
    mkdirSync(shotsDir, { recursive: true });
    console.log(`dashboard screenshots: ${shotsDir}`);
  }
  const path = join(shotsDir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
