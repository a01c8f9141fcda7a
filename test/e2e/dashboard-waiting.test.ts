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
        on_target_failure: "queue",
      });
      const { email } = (await res.json()) as { email: string };
      const sent = await sendWithNodemailer(appliance.inboundPort, {
        from: "alice@sender.test",
        to: email,
        subject: "Kept for later",
        text: "x",
      });
      expect(sent.code).toBe(250);

      await page.goto(`${appliance.http}/dashboard/`);
      await page.getByLabel("API token").fill(ACCOUNT_A.token);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Overview" }).waitFor();
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
      await eventually(
        async () => {
          await page.getByRole("button", { name: "Reload" }).click();
          return page.getByText("No mail is waiting for a target.").isVisible();
        },
        5_000,
        "the Waiting page to be empty",
      );
      await screenshot(page, "waiting-02-posted");
      expect(w.consoleErrors).toEqual([]);
    },
    60_000,
  );
});
