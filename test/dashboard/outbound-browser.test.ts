// The sending pages as a newcomer uses them, in chromium: a test-mode message carries a
// badge and offers no action that cannot apply; the webhook's next POST is never shown as
// a bare time in the past; host names wrap only at their dots; the SMTP page says what is
// true for the running config, without markdown.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS } from "../helpers/sending-domain.ts";
import { requireTools } from "../helpers/tools.ts";
import { api, type DashboardRig, pageIsClean, startDashboardRig } from "./browser-rig.ts";

const browserTest = requireTools("chromium");
let rig: DashboardRig;
const shots: string[] = [];
const LONG_DOMAIN = "customer-notifications.billing-department.example-company.example";

beforeAll(async () => {
  // The webhook receiver answers after 20 s and takes one event a POST: while the first is
  // in flight, the second waits, due since it was made.
  const hookPort = await import("../helpers/pebble.ts").then((m) => m.freePort());
  rig = await startDashboardRig({
    accounts: [{ ...ACCOUNT_A, extra: `webhook = { url = "http://127.0.0.1:${hookPort}/hook", token = "hook-token" }` }],
    outbound: SENDING_KEYS,
    submission: true,
    extra: '[webhooks]\nallow_private = true\nbatch_size = 1\ntimeout = "30s"',
  });
  slowHook = Bun.serve({
    hostname: "127.0.0.1",
    port: hookPort,
    idleTimeout: 60,
    async fetch() {
      await Bun.sleep(20_000);
      return new Response("ok");
    },
  });
  await api(rig, "POST", "sending_domains", { domain: "sender.test" });
}, 60_000);
let slowHook: ReturnType<typeof Bun.serve> | undefined;

afterAll(async () => {
  // The receiver goes first: the POST in flight fails at once and the app stops without waiting for it.
  slowHook?.stop(true);
  await rig?.stop();
  if (shots.length) console.log(`outbound screenshots:\n${shots.join("\n")}`);
}, 60_000);

// Test mode takes a sending domain that is not verified yet.
const sendTestMode = (subject: string, to: string[]) =>
  api<{ id: string }>(
    rig,
    "POST",
    `/api/v0.1/${ACCOUNT_A.outboundId}/messages`,
    { from: "shop@sender.test", to, subject, plain: "hi", test_mode: true },
    ACCOUNT_A.smtpKey,
  );

describe("the sending pages in chromium", () => {
  browserTest(
    "a test-mode message carries a test mode badge and offers neither Retry now nor Cancel",
    async () => {
      const sent = await sendTestMode("Trying test mode", ["bob@example.org", "carol@example.org"]);
      await rig.page.goto(`${rig.http}/dashboard/sent`);
      const row = rig.page.getByRole("row", { name: /Trying test mode/ });
      await row.waitFor();
      await row.getByText("test mode", { exact: true }).waitFor();
      shots.push(await pageIsClean(rig, "sent-test-mode"));
      await rig.page.goto(`${rig.http}/dashboard/sent/${sent.id}`);
      await rig.page.getByRole("heading", { name: "Trying test mode" }).waitFor();
      await rig.page.getByRole("link", { name: "Download source (.eml)" }).waitFor();
      expect(await rig.page.locator("main").getByText("test mode", { exact: true }).count()).toBeGreaterThanOrEqual(1);
      expect(await rig.page.getByRole("button", { name: "Retry now" }).count()).toBe(0);
      expect(await rig.page.getByRole("button", { name: "Cancel queued recipients" }).count()).toBe(0);
      shots.push(await pageIsClean(rig, "sent-message-test-mode"));
    },
    60_000,
  );

  browserTest(
    "the webhook page's next POST is never a bare time in the past: due now while it waits",
    async () => {
      // Two events (one a recipient): the first in flight, the second due since it was made.
      await sendTestMode("Webhook events", ["dave@example.org", "erin@example.org"]);
      await rig.page.goto(`${rig.http}/dashboard/webhook`);
      await rig.page.getByRole("heading", { name: "Webhook" }).waitFor();
      const next = rig.page.locator("dl.facts dd").nth(3);
      await next.waitFor();
      const text = (await next.textContent())!;
      const when = await next.locator("time").getAttribute("datetime");
      // Either it says the POST is due now, or the time it names is still to come.
      if (!text.includes("due now")) expect(Date.parse(when!)).toBeGreaterThan(Date.now());
      expect(text).toContain("due now");
      shots.push(await pageIsClean(rig, "webhook-due-now"));
    },
    60_000,
  );

  browserTest(
    "host names wrap only at their dots, never inside a label",
    async () => {
      const domain = await api(rig, "POST", "sending_domains", { domain: LONG_DOMAIN });
      const phone = await rig.browser.newContext({ viewport: { width: 390, height: 844 } });
      const page = await phone.newPage();
      await phone.addCookies(await rig.page.context().cookies());
      await page.goto(`${rig.http}/dashboard/domains/${domain.id}`);
      await page.getByRole("heading", { name: LONG_DOMAIN }).waitFor();
      // The Host column of the records, and the CNAME's value (a host too).
      const hosts = page.locator("tbody td:nth-child(2) code, tbody tr:has-text('CNAME') td:nth-child(3) code");
      expect(await hosts.count()).toBeGreaterThanOrEqual(4);
      for (const host of await hosts.all()) {
        const { text, breaks } = await host.evaluate(lineBreaks);
        for (const b of breaks) expect({ text, before: text.slice(0, b) }).toEqual({ text, before: expect.stringMatching(/\.$/) });
      }
      // At least one host is long enough to wrap on a phone: the test looks at real breaks.
      expect((await Promise.all((await hosts.all()).map((h) => h.evaluate(lineBreaks)))).some((r) => r.breaks.length > 0)).toBe(true);
      shots.push(await pageIsClean(rig, "domain-long-hosts-phone", page));
      await phone.close();
    },
    60_000,
  );

  browserTest(
    "the SMTP page says AUTH is taken without TLS when smtp.allow_insecure_auth is on, and shows no markdown",
    async () => {
      await rig.page.goto(`${rig.http}/dashboard/smtp`);
      await rig.page.getByRole("heading", { name: "SMTP credentials" }).waitFor();
      const tls = (await rig.page.locator("dl.facts dd").nth(3).textContent())!;
      expect(tls).not.toContain("refused");
      expect(tls).toContain("smtp.allow_insecure_auth is on");
      expect(await rig.page.locator("main").textContent()).not.toContain("`");
      await rig.page.locator("main code", { hasText: "postroom secret" }).first().waitFor();
      shots.push(await pageIsClean(rig, "smtp-insecure-auth"));
    },
    60_000,
  );
});

/** The few DOM calls lineBreaks makes (the tests are typed without the DOM library). */
interface TextRange {
  setStart(node: unknown, offset: number): void;
  setEnd(node: unknown, offset: number): void;
  getClientRects(): ArrayLike<{ top: number }>;
}
interface PageDocument {
  createTreeWalker(root: unknown, what: number): { nextNode(): { nodeValue: string | null } | null };
  createRange(): TextRange;
}

/** Where the element's text moves to a new line: the indexes of the first character of each line after the first. Runs in the page. */
function lineBreaks(el: unknown): { text: string; breaks: number[] } {
  const doc = (el as { ownerDocument: PageDocument }).ownerDocument;
  const walker = doc.createTreeWalker(el, 4 /* NodeFilter.SHOW_TEXT */);
  const range = doc.createRange();
  let text = "";
  let lastTop: number | null = null;
  const breaks: number[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const value = node.nodeValue ?? "";
    for (let i = 0; i < value.length; i++) {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getClientRects()[0];
      if (rect && lastTop !== null && rect.top > lastTop + 2) breaks.push(text.length);
      if (rect) lastTop = rect.top;
      text += value[i];
    }
  }
  return { text, breaks };
}
