// The overview as a newcomer meets it, in chromium: a getting-started checklist on a fresh
// account, ticked from the account's real state; charts with labelled axes; figures that
// are links to the pages listing them.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { screenshot, seriousA11yViolations, watchedPage } from "../helpers/browser.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { publishRecords, SENDING_KEYS } from "../helpers/sending-domain.ts";
import { runSwaks } from "../helpers/smtp.ts";
import { requireTools } from "../helpers/tools.ts";
import { api, createAddress, type DashboardRig, pageIsClean, sendIn, startDashboardRig, statusesStored } from "./browser-rig.ts";

const browserTest = requireTools("chromium", "swaks");
let rig: DashboardRig;
const shots: string[] = [];

beforeAll(async () => {
  rig = await startDashboardRig({ accounts: [ACCOUNT_A], outbound: SENDING_KEYS });
}, 60_000);

afterAll(async () => {
  await rig?.stop();
  if (shots.length) console.log(`overview screenshots:\n${shots.join("\n")}`);
});

/** The checklist item whose link is named `name`: its link's path and whether it reads as done. */
async function item(name: string): Promise<{ href: string; done: boolean }> {
  const li = rig.page.getByRole("region", { name: "Getting started" }).getByRole("listitem").filter({ hasText: name });
  const href = new URL((await li.getByRole("link", { name }).getAttribute("href"))!, rig.http).pathname;
  return { href, done: (await li.getAttribute("class"))?.includes("done") ?? false };
}

async function reloadOverview(): Promise<void> {
  await rig.page.goto(`${rig.http}/dashboard/overview`);
  await rig.page.getByRole("heading", { name: "Overview" }).waitFor();
  await rig.page.locator(".tiles").waitFor();
}

describe("the overview in chromium", () => {
  browserTest(
    "a fresh account gets a getting-started checklist, ticked from its real state, gone once all is done",
    async () => {
      await reloadOverview();
      await rig.page.getByRole("region", { name: "Getting started" }).waitFor();
      expect(await item("Create an address")).toEqual({ href: "/dashboard/addresses", done: false });
      expect(await item("Send a message in")).toEqual({ href: "/dashboard/incoming", done: false });
      expect(await item("Add a sending domain")).toEqual({ href: "/dashboard/domains", done: false });
      expect(await item("Send a first message in test mode")).toEqual({ href: "/dashboard/smtp", done: false });
      shots.push(await pageIsClean(rig, "overview-fresh"));
      // On a phone, dark: the checklist and the axes stay readable and clean.
      const phone = await watchedPage(rig.browser, rig.http, { colorScheme: "dark", viewport: { width: 390, height: 844 } });
      await phone.page.context().addCookies(await rig.page.context().cookies());
      await phone.page.goto(`${rig.http}/dashboard/overview`);
      await phone.page.getByRole("region", { name: "Getting started" }).waitFor();
      await phone.page.locator(".x-axis li").first().waitFor();
      await phone.page.getByRole("button", { name: "Last 7 days" }).click();
      await phone.page
        .locator(".x-axis li", { hasText: /Mon|Tue|Wed|Thu|Fri|Sat|Sun/ })
        .first()
        .waitFor();
      // The last day's label, near the right end, does not widen the page.
      expect(
        await phone.page.evaluate(() => {
          const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document;
          return d.documentElement.scrollWidth - d.documentElement.clientWidth;
        }),
      ).toBeLessThanOrEqual(0);
      shots.push(await screenshot(phone.page, "overview-fresh-phone-dark"));
      expect(phone.consoleErrors).toEqual([]);
      expect(await seriousA11yViolations(phone.page)).toEqual([]);
      await phone.page.context().close();

      const address = await createAddress(rig, "/in");
      await reloadOverview();
      expect((await item("Create an address")).done).toBe(true);
      expect((await item("Send a message in")).done).toBe(false);

      // The step says how to send one: the command works as shown (with a subject added).
      const command = (await rig.page.getByRole("region", { name: "Getting started" }).locator("code").textContent())!;
      expect(command).toBe(`swaks --server 127.0.0.1:${rig.t.app.inboundPort} --to ${address.email}`);
      const swaks = await runSwaks([...command.split(" ").slice(1), "--header", "Subject: First message"]);
      expect(swaks.transcript).toMatch(/<-\s+250 /);
      await statusesStored(rig, address.id, 1);
      await reloadOverview();
      expect((await item("Send a message in")).done).toBe(true);

      const domain = await api(rig, "POST", "sending_domains", { domain: "sender.test" });
      await reloadOverview();
      // Added but its records not found yet: not done, and the link opens that domain's records.
      expect(await item("Add a sending domain")).toEqual({ href: `/dashboard/domains/${domain.id}`, done: false });
      shots.push(await pageIsClean(rig, "overview-checklist-half-done"));
      publishRecords(rig.dns, domain);
      await api(rig, "POST", `sending_domains/${domain.id}/verify`);
      await reloadOverview();
      expect((await item("Add a sending domain")).done).toBe(true);

      await api(
        rig,
        "POST",
        `/api/v0.1/${ACCOUNT_A.outboundId}/messages`,
        { from: "shop@sender.test", to: ["bob@example.org"], subject: "First test", plain: "hi", test_mode: true },
        ACCOUNT_A.smtpKey,
      );
      await reloadOverview();
      expect(await rig.page.getByRole("region", { name: "Getting started" }).count()).toBe(0);
      shots.push(await pageIsClean(rig, "overview-all-done"));
    },
    60_000,
  );

  browserTest(
    "the charts have axes: times along the bottom, counts up the side",
    async () => {
      await reloadOverview();
      const received = rig.page.locator("figure.chart").filter({ hasText: "Received mail by outcome" });
      const times = await received.locator(".x-axis li").allTextContents();
      // 24 hourly bars, a time every 6 hours.
      expect(times.length).toBeGreaterThanOrEqual(4);
      for (const t of times) expect(t).toMatch(/\d{1,2}(:\d{2})?/);
      const counts = await received.locator(".y-axis li").allTextContents();
      expect(counts[0]).toBe("0");
      expect(Number(counts.at(-1))).toBeGreaterThanOrEqual(1);
      // The labels are drawn at their size, not stretched or shrunk with the bars, and under them.
      const box = await received.locator(".x-axis li").first().boundingBox();
      const bars = await received.locator("svg").boundingBox();
      expect(box!.height).toBeGreaterThan(8);
      expect(box!.height).toBeLessThan(30);
      expect(box!.y).toBeGreaterThanOrEqual(bars!.y + bars!.height - 1);
      await rig.page.getByRole("button", { name: "Last 7 days" }).click();
      await rig.page.getByRole("button", { name: "Last 7 days", pressed: true }).waitFor();
      await received
        .locator(".x-axis li", { hasText: /Mon|Tue|Wed|Thu|Fri|Sat|Sun/ })
        .first()
        .waitFor();
      const days = await received.locator(".x-axis li").allTextContents();
      // A label under the first bar of each day: 6 or 7 of them in 7 days.
      expect(days.length).toBeGreaterThanOrEqual(6);
      expect(days.join(" ")).toMatch(/Mon|Tue|Wed|Thu|Fri|Sat|Sun/);
      shots.push(await pageIsClean(rig, "overview-chart-axes"));
    },
    60_000,
  );

  browserTest(
    "each figure is a link to the page that lists it",
    async () => {
      await reloadOverview();
      const tiles = rig.page.locator(".tiles");
      const hrefOf = async (name: RegExp) => new URL((await tiles.getByRole("link", { name }).getAttribute("href"))!, rig.http);
      expect((await hrefOf(/received/)).pathname).toBe("/dashboard/incoming");
      const delivered = await hrefOf(/delivered/);
      expect(delivered.pathname + delivered.search).toBe("/dashboard/sent?query=status%3Adelivery");
      expect((await hrefOf(/bounced/)).search).toBe("?query=status%3Abounce");
      expect((await hrefOf(/in the queue/)).pathname).toBe("/dashboard/sent");
      expect((await hrefOf(/webhook events/)).pathname).toBe("/dashboard/webhook");
      // What needs a look links to its page too: a message the target refused, to Incoming.
      rig.target.answers.set("/refuse", { status: 422, body: "no thanks", contentType: "text/plain" });
      const refusing = await createAddress(rig, "/refuse");
      expect(await sendIn(rig, refusing.email, "Refused")).toContain("550");
      await statusesStored(rig, refusing.id, 1);
      await reloadOverview();
      const warning = rig.page.getByRole("region", { name: "Warnings" }).getByRole("link", { name: /not accepted by its target/ });
      expect(new URL((await warning.getAttribute("href"))!, rig.http).pathname).toBe("/dashboard/incoming");
      shots.push(await pageIsClean(rig, "overview-links"));
      await tiles.getByRole("link", { name: /received/ }).click();
      await rig.page.getByRole("heading", { name: "Incoming mail" }).waitFor();
      await rig.page.getByRole("cell", { name: "First message" }).waitFor();
    },
    60_000,
  );
});
