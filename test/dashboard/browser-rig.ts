// The dashboard in Debian's chromium (playwright-core) against an in-process appliance (the
// UI bundled from source on first use, so a test of a UI change needs no binary build):
// inbound SMTP on loopback with a real HTTP target, a real DNS server, one page signed in.
// Every page a test checks must hold to pageIsClean: no console error, no request outside
// the appliance, no serious or critical axe-core violation; its screenshot is saved.
import { expect } from "bun:test";
import nodemailer from "nodemailer";
import type { Browser, Page } from "playwright-core";
import { App } from "../../src/app.ts";
import { parseConfigText } from "../../src/config/load.ts";
import { createResolver } from "../../src/lib/dns.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { launchBrowser, screenshot, seriousA11yViolations, watchedPage, type WatchedPage } from "../helpers/browser.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, testConfigToml, type TestConfigOptions } from "../helpers/fixtures.ts";
import { freePort } from "../helpers/pebble.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";

/** The appliance in this process, and its API called through the HTTP listener's handler. */
export interface RigApp {
  app: App;
  call(method: string, path: string, opts?: { body?: unknown; auth?: string }): Promise<Response>;
}

export interface DashboardRig {
  t: RigApp;
  http: string;
  target: TestTarget;
  dns: TestDnsServer;
  browser: Browser;
  w: WatchedPage;
  page: Page;
  stop(): Promise<void>;
}

/**
 * The SMTP listeners get fixed free ports (as a user's config has), so the pages that show
 * them (the SMTP page, the getting-started checklist's swaks line) show the real ones.
 */
export async function startDashboardRig(
  opts: Omit<TestConfigOptions, "dataDir" | "dnsServer"> & { token?: string } = {},
): Promise<DashboardRig> {
  const dns = await TestDnsServer.start();
  const target = TestTarget.start();
  const dir = tempDir();
  const toml = testConfigToml({ inbound: true, ...opts, dataDir: dir.path, dnsServer: dns.address })
    .replace('inbound_listen = "127.0.0.1:0"', `inbound_listen = "127.0.0.1:${await freePort()}"`)
    .replace('submission_listen = "127.0.0.1:0"', `submission_listen = "127.0.0.1:${await freePort()}"`);
  const parsed = parseConfigText(toml);
  if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
  const app = await App.start({
    config: parsed.config,
    logger: silentLogger,
    resolver: createResolver({ servers: [dns.address], timeoutMs: 300 }),
  });
  const t: RigApp = {
    app,
    call: (method, path, o = {}) =>
      app.handle(
        new Request(`http://localhost${path}`, {
          method,
          headers: {
            ...(o.auth ? { authorization: o.auth } : {}),
            ...(o.body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: o.body === undefined ? undefined : JSON.stringify(o.body),
        }),
      ),
  };
  const http = `http://127.0.0.1:${t.app.httpPort}`;
  const browser = await launchBrowser();
  const w = await watchedPage(browser, http);
  await w.page.goto(`${http}/dashboard/`);
  await w.page.getByLabel("API token").fill(opts.token ?? ACCOUNT_A.token);
  await w.page.getByRole("button", { name: "Sign in" }).click();
  await w.page.getByRole("heading", { name: "Overview" }).waitFor();
  return {
    t,
    http,
    target,
    dns,
    browser,
    w,
    page: w.page,
    async stop() {
      await browser.close();
      await app.stop();
      await target.stop();
      await dns.stop();
      dir.remove();
    },
  };
}

/** Saves the page's screenshot and checks it holds to the dashboard's rules; returns the PNG's path. */
export async function pageIsClean(rig: DashboardRig, name: string, page: Page = rig.page): Promise<string> {
  const path = await screenshot(page, name);
  expect(rig.w.consoleErrors).toEqual([]);
  expect(rig.w.foreignRequests).toEqual([]);
  expect(await seriousA11yViolations(page)).toEqual([]);
  return path;
}

/** Calls the account API as account A (or with `token`); the parsed JSON body. */
export async function api<T = any>(rig: DashboardRig, method: string, path: string, body?: unknown, token = ACCOUNT_A.token): Promise<T> {
  const res = await rig.t.call(method, path.startsWith("/") ? path : `/api/v0.1/${ACCOUNT_A.id}/${path}`, {
    auth: `Bearer ${token}`,
    body,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : null) as T;
}

/** An address of account A posting to the rig's target at `path`. */
export async function createAddress(
  rig: DashboardRig,
  path: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; email: string }> {
  return api(rig, "POST", "addresses", { target: rig.target.url(path), target_format: "json+n", ...extra });
}

/** A message sent in over SMTP as a sender would; resolves with the reply it got (accepted or not). */
export async function sendIn(rig: DashboardRig, to: string, subject: string, headers: Record<string, string> = {}): Promise<string> {
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port: rig.t.app.inboundPort!, secure: false, ignoreTLS: true });
  try {
    const info = await transport.sendMail({ from: "alice@sender.test", to, subject, text: "Hello from the test", headers });
    return info.response;
  } catch (err) {
    return String((err as { response?: string }).response ?? err);
  } finally {
    transport.close();
  }
}

/** Incoming statuses are journaled and stored in groups: waits until `address` lists `count`. */
export async function statusesStored(rig: DashboardRig, addressId: string, count: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    await rig.t.app.repos.statuses.flush();
    const list = await api<unknown[]>(rig, "GET", `incoming_statuses?address_id=${addressId}`);
    if (list.length >= count) return;
    await Bun.sleep(100);
  }
  throw new Error(`address ${addressId} never listed ${count} statuses`);
}
