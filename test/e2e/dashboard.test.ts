// The dashboard in a real browser (Debian's chromium through playwright-core) against the
// built binary: sign in, create an address, mail sent with swaks shows in the incoming
// statuses with the target's answer, another account's address cannot be opened by URL,
// sign out ends the session. On every page: no console error, no request outside the
// appliance, no serious or critical axe-core violation; a screenshot of each is saved.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { startBinaryAppliance, type BinaryAppliance } from "../helpers/binary-appliance.ts";
import { launchBrowser, screenshot, seriousA11yViolations, watchedPage, type WatchedPage } from "../helpers/browser.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { runSwaks } from "../helpers/smtp.ts";
import { hashSecret } from "../../src/auth/secrets.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { requireTools } from "../helpers/tools.ts";

const browserTest = requireTools("chromium", "swaks");
let appliance: BinaryAppliance;
const OPERATOR_TOKEN = "pr_operator_token_dashboard_test";
let dns: TestDnsServer;
let browser: Browser;
let w: WatchedPage;
let page: Page;

beforeAll(async () => {
  dns = await TestDnsServer.start();
  dns.set("shop.example.net", [{ type: "MX", exchange: "mx.postroom.test", priority: 10 }]);
  appliance = await startBinaryAppliance({
    accounts: [ACCOUNT_A, ACCOUNT_B],
    submission: true,
    dnsServer: dns.address,
    extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR_TOKEN)}"]`,
  });
  appliance.target.answers.set("/refuse", { status: 422, body: "no such customer here" });
  browser = await launchBrowser();
  w = await watchedPage(browser, appliance.http);
  page = w.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await appliance?.stop();
  await dns?.stop();
});

/** What every page must hold to: checked after each step. */
async function pageIsClean(name: string): Promise<void> {
  await screenshot(page, name);
  expect(w.consoleErrors).toEqual([]);
  expect(w.foreignRequests).toEqual([]);
  expect(await seriousA11yViolations(page)).toEqual([]);
}

async function swaks(to: string, subject: string): Promise<string> {
  const r = await runSwaks([
    "--server",
    `127.0.0.1:${appliance.inboundPort}`,
    "--from",
    "alice@sender.test",
    "--to",
    to,
    "--header",
    `Subject: ${subject}`,
    "--body",
    "Hello from swaks",
    "--timeout",
    "20",
  ]);
  return r.transcript;
}

describe("dashboard in chromium", () => {
  browserTest(
    "/ leads to the sign-in page; a wrong token says so; the account's token signs in",
    async () => {
      await page.goto(appliance.http + "/");
      expect(new URL(page.url()).pathname).toBe("/dashboard/");
      await page.getByLabel("API token").fill("pr_not_a_token");
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect(page.getByRole("alert").textContent()).resolves.toContain("does not belong to any account");
      await pageIsClean("01-sign-in-refused");
      await page.getByLabel("API token").fill(ACCOUNT_A.token);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      await page.getByRole("link", { name: "Addresses" }).click();
      await page.getByText(appliance.email, { exact: true }).waitFor();
      const cookie = (await page.context().cookies()).find((c) => c.name === "postroom_session");
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict" });
      await pageIsClean("02-addresses");
    },
    60_000,
  );

  browserTest(
    "an address created in the form gets mail; the incoming list shows the target's answer",
    async () => {
      await page.getByLabel("Target URL").fill(appliance.target.url("/refuse"));
      await page.getByLabel("Nickname (optional)").fill("refusing target");
      await page.getByRole("button", { name: "Create address" }).click();
      const created = (await page.getByRole("status").locator("code").textContent())!;
      expect(created).toMatch(/^[0-9a-f]{20}@/);
      await page.getByRole("cell", { name: "refusing target" }).waitFor();
      await pageIsClean("03-address-created");

      expect(await swaks(appliance.email, "Accepted by the target")).toMatch(/<-\s+250 /);
      expect(await swaks(created, "Refused by the target")).toMatch(/<\*\*\s+550 /);

      await page.getByRole("link", { name: "Incoming" }).click();
      await page.getByLabel("Address").selectOption({ label: `refusing target (${created})` });
      await page.getByRole("cell", { name: "Refused by the target" }).waitFor();
      const row = page.getByRole("row", { name: /Refused by the target/ });
      expect(await row.locator(".status").textContent()).toBe("422");
      await row.getByText("Response").click();
      expect(await row.locator("pre").textContent()).toContain("no such customer here");
      await row.getByText("Details").click();
      const details = (await row.locator("dl.details").textContent())!;
      expect(details).toContain("127.0.0.1 without TLS");
      expect(details).toMatch(/X-Postroom-Message-Id[0-9a-f]{32}/);
      await pageIsClean("04-incoming-refused");

      await page.getByLabel("Address").selectOption({ label: appliance.email });
      await page.getByRole("cell", { name: "Accepted by the target" }).waitFor();
      expect(
        await page
          .getByRole("row", { name: /Accepted by the target/ })
          .locator(".status")
          .textContent(),
      ).toBe("200");
      await page.getByLabel("Search").fill("subject:nothing-like-this");
      await page.getByRole("button", { name: "Search" }).click();
      await page.getByText("No messages match this search.").waitFor();
      await pageIsClean("05-incoming-search");

      await page.getByRole("link", { name: "Overview" }).click();
      const warnings = page.getByRole("region", { name: "Warnings" });
      await warnings.getByText("1 received message was not accepted by its target in this period").waitFor();
      expect(await page.locator(".tile").first().textContent()).toBe("2 received");
      expect(await page.getByRole("img", { name: /^Received mail by outcome/ }).getAttribute("aria-label")).toBe(
        "Received mail by outcome: successful 1, rejected 1, delayed 0",
      );
      await page.getByRole("button", { name: "Last 7 days" }).click();
      await page.getByRole("button", { name: "Last 7 days", pressed: true }).waitFor();
      expect(await page.getByRole("img", { name: /^Received mail by outcome/ }).getAttribute("aria-label")).toBe(
        "Received mail by outcome: successful 1, rejected 1, delayed 0",
      );
      await pageIsClean("05b-overview");
    },
    60_000,
  );

  browserTest(
    "an address's page edits its nickname and adds custom domains with their MX status",
    async () => {
      await page.getByRole("link", { name: "Addresses" }).click();
      await page.getByRole("link", { name: appliance.email }).click();
      await page.getByRole("button", { name: "Send a test POST" }).click();
      await page
        .getByRole("status")
        .getByText(/The target answered 200/)
        .waitFor();
      expect(appliance.target.at("/in").at(-1)!.json.headers.subject).toBe("Postroom test POST");
      await page.getByLabel("Nickname (optional)").fill("main inbox");
      await page.getByLabel("Keep received messages").check();
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("status").getByText("Saved.").waitFor();
      await page.getByLabel("Domain", { exact: true }).fill("shop.example.net");
      await page.getByRole("button", { name: "Add custom domain" }).click();
      await page
        .getByRole("row", { name: /shop\.example\.net/ })
        .getByText("points here")
        .waitFor();
      await page.getByLabel("Domain", { exact: true }).fill("elsewhere.example.net");
      await page.getByRole("button", { name: "Add custom domain" }).click();
      await page
        .getByRole("row", { name: /elsewhere\.example\.net/ })
        .getByText("not pointing here")
        .waitFor();
      await pageIsClean("05c-address-page");
      page.once("dialog", (d) => void d.accept());
      await page.getByRole("button", { name: "Remove elsewhere.example.net" }).click();
      await page.getByRole("row", { name: /elsewhere\.example\.net/ }).waitFor({ state: "detached" });
      const list = (await (
        await fetch(`${appliance.http}/api/v0.1/${ACCOUNT_A.id}/addresses`, { headers: { authorization: `Bearer ${ACCOUNT_A.token}` } })
      ).json()) as { email: string; nickname: string | null }[];
      expect(list.find((a) => a.email === appliance.email)?.nickname).toBe("main inbox");

      // Kept from now on: the next message's Details link its source, which serves the message.
      expect(await swaks(appliance.email, "Kept message")).toMatch(/<-\s+250 /);
      await page.getByRole("link", { name: "Incoming" }).click();
      await page.getByLabel("Address").selectOption({ label: `main inbox (${appliance.email})` });
      const kept = page.locator("section > table > tbody > tr", { hasText: "Kept message" }).first();
      await kept.getByText("Details").click();
      const href = (await kept.getByRole("link", { name: "Download (.eml)" }).getAttribute("href"))!;
      const source = await (await fetch(new URL(new URL(href).pathname + new URL(href).search, appliance.http))).text();
      expect(source).toContain("Subject: Kept message");
      // Its headers as sent and the payload the target got, then Post again: a second POST
      // of the same message and a new status first in the list.
      await kept.getByRole("button", { name: "Headers and payload" }).click();
      await kept.getByRole("row", { name: "Subject Kept message", exact: true }).waitFor();
      const payload = JSON.parse((await kept.getByLabel("Payload posted").textContent())!);
      expect(payload.envelope).toEqual(appliance.target.at("/in").at(-1)!.json.envelope);
      await pageIsClean("05d-incoming-kept-message");
      const posts = appliance.target.at("/in").length;
      await kept.getByRole("button", { name: "Post again" }).click();
      await page
        .getByRole("status")
        .getByText(/Posted again: a sender would have been told 250 /)
        .waitFor();
      expect(appliance.target.at("/in")).toHaveLength(posts + 1);
      expect(appliance.target.at("/in").at(-1)!.json.headers.subject).toBe("Kept message");
      await page.locator("section > table > tbody > tr", { hasText: "Kept message" }).nth(1).waitFor();
      expect(await page.locator("section > table > tbody > tr", { hasText: "Kept message" }).count()).toBe(2);
    },
    60_000,
  );

  browserTest(
    "another account's address cannot be opened by URL: not found, nothing of it shown",
    async () => {
      const other = await fetch(`${appliance.http}/api/v0.1/${ACCOUNT_B.id}/addresses`, {
        method: "POST",
        headers: { authorization: `Bearer ${ACCOUNT_B.token}`, "content-type": "application/json" },
        body: JSON.stringify({ target: appliance.target.url("/b"), target_format: "json+n", nickname: "account B secret" }),
      });
      const b = (await other.json()) as { id: string };
      await page.goto(`${appliance.http}/dashboard/incoming?address=${b.id}`);
      await page.getByRole("heading", { name: "Not found" }).waitFor();
      expect(await page.getByText("account B secret").count()).toBe(0);
      await pageIsClean("06-other-account-not-found");
    },
    60_000,
  );

  browserTest(
    "the sent list and a phone-sized dark page render cleanly",
    async () => {
      await page.goto(`${appliance.http}/dashboard/sent`);
      await page.getByRole("heading", { name: "Sent mail" }).waitFor();
      await pageIsClean("07-sent-empty");
      const phone = await watchedPage(browser, appliance.http, { colorScheme: "dark", viewport: { width: 390, height: 844 } });
      await phone.page.context().addCookies(await page.context().cookies());
      await phone.page.goto(`${appliance.http}/dashboard/addresses`);
      await phone.page.getByRole("heading", { name: "Addresses" }).waitFor();
      await screenshot(phone.page, "08-addresses-phone-dark");
      expect(phone.consoleErrors).toEqual([]);
      expect(await seriousA11yViolations(phone.page)).toEqual([]);
      await phone.page.context().close();
    },
    60_000,
  );

  browserTest(
    "the SMTP page gives the username, host and port to send with, and no key",
    async () => {
      await page.goto(`${appliance.http}/dashboard/smtp`);
      await page.getByRole("heading", { name: "SMTP credentials" }).waitFor();
      const text = (await page.locator("main").textContent())!;
      expect(text).toContain(ACCOUNT_A.outboundId);
      expect(text).toContain(`port: ${appliance.submissionPort}`);
      expect(text).toContain(`--server mx.postroom.test:${appliance.submissionPort}`);
      expect(text).not.toContain(ACCOUNT_A.smtpKey);
      await pageIsClean("09-smtp");
    },
    60_000,
  );

  browserTest(
    "sign out ends the session: the sign-in page again, and the old cookie opens nothing",
    async () => {
      const cookie = (await page.context().cookies()).find((c) => c.name === "postroom_session")!;
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("API token").waitFor();
      await page.goto(`${appliance.http}/dashboard/addresses`);
      await page.getByLabel("API token").waitFor();
      const res = await fetch(`${appliance.http}/api/v0.1/${ACCOUNT_A.id}/addresses`, {
        headers: { cookie: `postroom_session=${cookie.value}` },
      });
      expect(res.status).toBe(401);
      await pageIsClean("10-signed-out");
    },
    60_000,
  );

  browserTest(
    "an operator token opens the admin view: the System page, and every account by the switcher",
    async () => {
      await page.goto(`${appliance.http}/dashboard/`);
      await page.getByLabel("API token").fill(OPERATOR_TOKEN);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      await page.getByRole("link", { name: "System" }).click();
      await page.getByRole("heading", { name: "System" }).waitFor();
      const facts = (await page.locator("dl.facts").textContent())!;
      expect(facts).toContain("Health" + "ok");
      expect(facts).toContain("none (tls.mode off)");
      await pageIsClean("11-admin-system");
      await page.getByLabel("Account").selectOption({ label: `test ${ACCOUNT_B.id}` });
      await page.getByRole("link", { name: "Addresses" }).click();
      await page.getByRole("cell", { name: "account B secret" }).waitFor();
      await page.getByLabel("Account").selectOption({ label: `test ${ACCOUNT_A.id}` });
      await page.getByRole("cell", { name: "main inbox" }).waitFor();
      await pageIsClean("12-admin-accounts");
    },
    60_000,
  );
});
