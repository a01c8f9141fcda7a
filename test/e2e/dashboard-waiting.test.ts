// (beyond) Issue 35 in the dashboard, in a real browser against the built binary: mail kept
// for a target that answers 503 shows on the Waiting page with since when, its attempts and
// the target's last answer; "Try now" posts it at once when the target is back, and the
// page then says nothing waits. No console error, no foreign request, no serious axe issue.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { startBinaryAppliance, type BinaryAppliance } from "../helpers/binary-appliance.ts";
import { launchBrowser, screenshot, seriousA11yViolations, watchedPage, type WatchedPage } from "../helpers/browser.ts";
import { nodeApi } from "../helpers/cluster-node.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { eventually } from "../helpers/sink.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { requireTools } from "../helpers/tools.ts";

const browserTest = requireTools("chromium");
let appliance: BinaryAppliance;
let browser: Browser;
let w: WatchedPage;
let page: Page;

beforeAll(async () => {
  // An hour between attempts: only "Try now" posts it again during the test.
  appliance = await startBinaryAppliance({ accounts: [ACCOUNT_A], inboundKeys: 'retry_delays = ["1h"]' });
  browser = await launchBrowser();
  w = await watchedPage(browser, appliance.http);
  page = w.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await appliance?.stop();
});

describe("Waiting page", () => {
  browserTest(
    "shows what waits and the target's last answer; Try now posts it",
    async () => {
      const port = Number(new URL(appliance.http).port);
      appliance.target.answers.set("/later", { status: 503, contentType: "text/plain", body: "back at noon" });
      const res = await nodeApi(port, `/api/v0.1/${ACCOUNT_A.id}/addresses`, "POST", {
        target: appliance.target.url("/later"),
        target_format: "json+n",
      });
      const { id, email } = (await res.json()) as { id: string; email: string };
      // The default (defer): the sender is told to retry.
      const mail = (subject: string) =>
        sendWithNodemailer(appliance.inboundPort, { from: "alice@sender.test", to: email, subject, text: "x" });
      expect((await mail("Told to retry")).code).toBe(451);

      await page.goto(`${appliance.http}/dashboard/`);
      await page.getByLabel("API token").fill(ACCOUNT_A.token);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      // The address's page turns queue mode on; a threshold that is not a number gets the API's 422.
      await page.goto(`${appliance.http}/dashboard/addresses/${id}`);
      await page.getByLabel("Keep mail while the target is down").check();
      await page.getByLabel("Refuse spam above score (optional)").fill("high");
      await page.getByRole("button", { name: "Save" }).first().click();
      await page
        .getByRole("alert")
        .getByText(/spam_threshold/)
        .waitFor();
      await page.getByLabel("Refuse spam above score (optional)").fill("7.5");
      await page.getByRole("button", { name: "Save" }).first().click();
      await page.getByText("Saved.").waitFor();
      const saved = (await (await nodeApi(port, `/api/v0.1/${ACCOUNT_A.id}/addresses/${id}`)).json()) as Record<string, unknown>;
      expect(saved).toMatchObject({ on_target_failure: "queue", spam_threshold: 7.5 });
      await screenshot(page, "waiting-00-address");
      expect(await seriousA11yViolations(page)).toEqual([]);
      w.consoleErrors.length = 0; // the 422 above is logged by the browser as a failed request

      expect((await mail("Kept for later")).code).toBe(250);
      await page.getByRole("link", { name: "Waiting" }).click();
      const row = page.getByRole("row", { name: /Kept for later/ });
      await row.waitFor();
      expect(await row.textContent()).toContain("back at noon");
      expect(await row.textContent()).toContain(email);
      await screenshot(page, "waiting-01-kept");
      expect(w.consoleErrors).toEqual([]);
      expect(w.foreignRequests).toEqual([]);
      expect(await seriousA11yViolations(page)).toEqual([]);

      appliance.target.answers.set("/later", { status: 200, body: "ok" });
      const before = appliance.target.at("/later").length;
      await row.getByRole("button", { name: "Try now" }).click();
      await page.getByRole("status").waitFor();
      await eventually(() => appliance.target.at("/later").length === before + 1, 5_000, "the POST Try now asked for");
      // Each reload is given a second to come back: clicking again every 20 ms would keep a
      // slow machine's page reloading forever and never show the answer.
      const emptyAfterReload = async () => {
        await page.getByRole("button", { name: "Reload" }).click();
        return page
          .getByText("No mail is waiting for a target.")
          .waitFor({ timeout: 1_000 })
          .then(() => true)
          .catch(() => false);
      };
      await eventually(emptyAfterReload, 15_000, "the Waiting page to be empty");
      await screenshot(page, "waiting-02-posted");
      // Incoming tells the kept message from the deferred one: what the sender heard, and the POSTs made.
      await page.goto(`${appliance.http}/dashboard/incoming?address=${id}`);
      const kept = page.getByRole("row", { name: /Kept for later/ });
      await kept.getByText("Kept for the target: delivered, 2 POSTs").waitFor();
      expect(await kept.textContent()).toContain("Sender was told 250 2.0.0 Accepted; the target is unavailable");
      expect(await page.getByRole("row", { name: /Told to retry/ }).textContent()).toContain("Sender was told 451 4.3.0 back at noon");
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, "waiting-03-incoming");
      expect(w.consoleErrors).toEqual([]);
    },
    60_000,
  );
});
