// The dashboard's outbound pages in a real browser against the built binary, with a real
// DNS server and a real SMTP sink as the recipients' MX: a sending domain added in the
// page shows its records and turns verified once the DNS server publishes them; a message
// sent through E11 shows each recipient's timeline with the sink's reply, and the bounce of
// the recipient the sink refuses; a suppression is added and removed (bulk).
import { afterAll, beforeAll, describe, expect } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { startBinaryAppliance, type BinaryAppliance } from "../helpers/binary-appliance.ts";
import { launchBrowser, screenshot, seriousA11yViolations, watchedPage, type WatchedPage } from "../helpers/browser.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { publishRecords, SENDING_KEYS } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { requireTools } from "../helpers/tools.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";

const browserTest = requireTools("chromium");
let appliance: BinaryAppliance;
let dns: TestDnsServer;
let sink: SmtpSink;
let browser: Browser;
let w: WatchedPage;
let page: Page;
let hook: WebhookReceiver;
const SECRET = "whsec_" + Buffer.from("dashboard webhook page secret").toString("base64");

beforeAll(async () => {
  sink = await SmtpSink.start();
  sink.script = (rcpt) =>
    rcpt.startsWith("gone@")
      ? { code: 550, text: "5.1.1 gone@example.org: no such mailbox here", at: "rcpt" }
      : rcpt.startsWith("later@")
        ? { code: 451, text: "4.2.0 try later", at: "rcpt" }
        : "accept";
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  hook = WebhookReceiver.start(SECRET);
  hook.script.push(503);
  appliance = await startBinaryAppliance({
    accounts: [{ ...ACCOUNT_A, extra: `webhook = { url = "${hook.url}", token = "hook-token", signing_secret = "${SECRET}" }` }],
    dnsServer: dns.address,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
    extra: "[webhooks]\nallow_private = true",
  });
  browser = await launchBrowser();
  w = await watchedPage(browser, appliance.http);
  page = w.page;
  await page.goto(`${appliance.http}/dashboard/`);
  await page.getByLabel("API token").fill(ACCOUNT_A.token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await appliance?.stop();
  await sink?.stop();
  await dns?.stop();
  await hook?.stop();
});

async function pageIsClean(name: string): Promise<void> {
  await screenshot(page, name);
  expect(w.consoleErrors).toEqual([]);
  expect(w.foreignRequests).toEqual([]);
  expect(await seriousA11yViolations(page)).toEqual([]);
}

const api = (path: string, init: RequestInit & { key?: string } = {}) =>
  fetch(`${appliance.http}/api/v0.1/${path}`, {
    ...init,
    headers: { authorization: `Bearer ${init.key ?? ACCOUNT_A.token}`, "content-type": "application/json" },
  });

describe("dashboard outbound pages in chromium", () => {
  browserTest(
    "a sending domain shows its records, and turns verified once the DNS server publishes them",
    async () => {
      await page.getByRole("link", { name: "Domains" }).click();
      await page.getByLabel("Domain", { exact: true }).fill("sender.test");
      await page.getByRole("button", { name: "Add domain" }).click();
      await page.getByRole("heading", { name: "sender.test" }).waitFor();
      expect(await page.getByRole("status").textContent()).toContain("not verified");
      const dkimRow = page.getByRole("row", { name: /dkim/ }).first();
      expect(await dkimRow.textContent()).toContain("not found");
      await page.getByRole("button", { name: "Verify now" }).click();
      await page.locator("p.hint").first().waitFor();
      await pageIsClean("10-domain-unverified");

      const [domain] = (await (await api(`${ACCOUNT_A.id}/sending_domains`)).json()) as {
        dns_records: { type: string; host: string; value: string }[];
      }[];
      publishRecords(dns, domain!);
      // With a DMARC policy too: the domain's health (issue 36) has nothing left to fix.
      dns.set("_dmarc.sender.test", [{ type: "TXT", data: ["v=DMARC1; p=quarantine"] }]);
      await page.getByRole("button", { name: "Verify now" }).click();
      await page.getByRole("status").getByText("verified", { exact: true }).waitFor();
      expect(await page.locator("p.hint").count()).toBe(0);
      await pageIsClean("11-domain-verified");
    },
    60_000,
  );

  browserTest(
    "a sent message shows each recipient's timeline: the sink's reply, and the bounce",
    async () => {
      const sent = await api(`${ACCOUNT_A.outboundId}/messages`, {
        method: "POST",
        key: ACCOUNT_A.smtpKey,
        body: JSON.stringify({
          from: "ann@sender.test",
          to: "bob@example.org, gone@example.org",
          subject: "Quarterly figures",
          plain: "Hello",
        }),
      });
      expect(sent.status).toBe(202);
      const { id } = (await sent.json()) as { id: string };
      await eventually(
        async () => {
          const m = (await (await api(`${ACCOUNT_A.id}/outbound_messages/${id}`)).json()) as { recipients: { status: string }[] };
          return m.recipients.every((r) => r.status === "delivery" || r.status === "bounce");
        },
        20_000,
        "delivery and bounce",
      );

      await page.getByRole("link", { name: "Sent" }).click();
      await page.getByRole("cell", { name: "Quarterly figures" }).waitFor();
      await pageIsClean("12-sent-list");
      await page
        .getByRole("row", { name: /Quarterly figures/ })
        .getByRole("link")
        .click();
      await page.getByRole("heading", { name: "Quarterly figures" }).waitFor();
      const bob = page.getByRole("region", { name: "Events for bob@example.org" });
      expect(await bob.textContent()).toMatch(/delivery/);
      expect(await bob.textContent()).toMatch(/250/);
      const gone = page.getByRole("region", { name: "Events for gone@example.org" });
      expect(await gone.textContent()).toMatch(/bounce/);
      expect(await gone.textContent()).toContain("no such mailbox here");
      await pageIsClean("13-sent-timeline");

      await page.getByRole("link", { name: "Overview" }).click();
      await page.getByRole("img", { name: "Sent mail: recipients by event: delivery 1, bounce 1, deferral 0, open 0, click 0" }).waitFor();
      expect(await page.locator(".tile").nth(1).textContent()).toBe("1 delivered");
      expect(await page.locator(".tile").nth(2).textContent()).toBe("1 bounced");
      await pageIsClean("13b-overview-sent");
    },
    60_000,
  );

  browserTest(
    "a sent message's page shows its HTML sandboxed, its headers, the source; cancel takes a deferred recipient off the queue",
    async () => {
      const sent = await api(`${ACCOUNT_A.outboundId}/messages`, {
        method: "POST",
        key: ACCOUNT_A.smtpKey,
        body: JSON.stringify({
          from: "ann@sender.test",
          to: "later@example.org",
          subject: "Deferred figures",
          plain: "Plain",
          html: "<h1>Rich figures</h1>",
        }),
      });
      const { id } = (await sent.json()) as { id: string };
      await eventually(
        async () =>
          ((await (await api(`${ACCOUNT_A.id}/outbound_messages/${id}`)).json()) as { recipients: { status: string }[] }).recipients[0]!
            .status === "soft_bounce",
        20_000,
        "the deferral",
      );
      await page.goto(`${appliance.http}/dashboard/sent/${id}`);
      await page.getByRole("heading", { name: "Deferred figures" }).waitFor();
      const frame = page.frameLocator('iframe[title="The HTML part of the message"]');
      await frame.getByRole("heading", { name: "Rich figures" }).waitFor();
      expect(await page.locator("iframe.html-part").getAttribute("sandbox")).toBe("");
      await page.getByText("Headers").click();
      await page.getByText("Deferred figures", { exact: true }).last().waitFor();
      expect(await page.getByRole("link", { name: "Download source (.eml)" }).getAttribute("href")).toBe(
        `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${id}/raw`,
      );
      await pageIsClean("13c-sent-message");
      page.once("dialog", (d) => void d.accept());
      await page.getByRole("button", { name: "Cancel queued recipients" }).click();
      await page.getByRole("status").getByText("1 recipient(s) cancelled.").waitFor();
      await page.getByRole("region", { name: "Events for later@example.org" }).getByText("cancelled from the dashboard").waitFor();
      await pageIsClean("13d-sent-cancelled");
    },
    60_000,
  );

  browserTest(
    "the webhook page shows the receiver's refusal, retries now, and sends a test event",
    async () => {
      // The receiver refused the first POST (503 "try later") of the message sent above.
      await eventually(() => hook.posts.length >= 1, 20_000, "the first webhook POST");
      await page.getByRole("link", { name: "Webhook" }).click();
      await page.getByRole("heading", { name: "Latest POSTs" }).waitFor();
      const refused = page.getByRole("row", { name: /503/ });
      expect(await refused.textContent()).toContain("try later");
      await pageIsClean("14a-webhook-refused");
      await page.getByRole("button", { name: "Retry now" }).click();
      await page
        .getByRole("status")
        .getByText(/will be posted now/)
        .waitFor();
      await eventually(() => hook.posts.some((p) => p.status === 200), 20_000, "the retried POST");
      await page.getByRole("button", { name: "Send a test event" }).click();
      await page.getByRole("status").getByText("The receiver answered 200.").waitFor();
      const test = hook.posts.at(-1)!;
      expect(test.verified).toBe(true);
      expect(test.body.events[0].details.test).toBe(true);
      await page.getByRole("cell", { name: /test/ }).first().waitFor();
      await pageIsClean("14b-webhook-test");
    },
    60_000,
  );

  browserTest(
    "a suppression is added, found by search, and removed with the bulk action",
    async () => {
      await page.getByRole("link", { name: "Suppressions" }).click();
      await page.getByLabel("Email address").fill("stop@example.org");
      await page.getByRole("button", { name: "Add suppression" }).click();
      await page.getByRole("cell", { name: "stop@example.org", exact: true }).waitFor();
      await pageIsClean("14-suppressions");
      await page.getByRole("checkbox", { name: "Select stop@example.org" }).check();
      await page.getByRole("button", { name: /Remove selected/ }).click();
      await page.getByText("1 removed").waitFor();
      // The list is read again after the removal: the row goes once it has been.
      await page.getByRole("cell", { name: "stop@example.org", exact: true }).waitFor({ state: "detached" });
      const left = (await (
        await api(`${ACCOUNT_A.id}/suppressions?outbound_account_id=${ACCOUNT_A.outboundId}&query=stop@`)
      ).json()) as unknown[];
      expect(left).toEqual([]);
      await pageIsClean("15-suppression-removed");
    },
    60_000,
  );
});
