// The admin view's Queue page in chromium: the queue by destination with its last reply,
// hold (the count shown, the row held), release (delivered at once), the bounce class shown
// with a bounce on the sent message's page; an account's session gets no queue (404).
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { hashSecret } from "../../src/auth/secrets.ts";
import type { TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";
import { requireTools } from "../helpers/tools.ts";
import { api, type DashboardRig, pageIsClean, startDashboardRig } from "./browser-rig.ts";

const browserTest = requireTools("chromium");
const OPERATOR = "pr_operator_queue_page";
let rig: DashboardRig;
let sink: SmtpSink;
let accept = false;
let bounced: string;
const shots: string[] = [];

const send = async (to: string) =>
  (
    await api(
      rig,
      "POST",
      `/api/v0.1/${ACCOUNT_A.outboundId}/messages`,
      { from: "ann@sender.test", to, subject: "q", plain: "x" },
      ACCOUNT_A.smtpKey,
    )
  ).id as string;
const kinds = async (id: string): Promise<string[]> =>
  (await api(rig, "GET", `outbound_messages/${id}`)).recipients[0].events.map((e: { kind: string }) => e.kind);

beforeAll(async () => {
  sink = await SmtpSink.start();
  sink.script = (rcpt) =>
    rcpt === "listed@example.org"
      ? { code: 554, text: "5.7.1 Service unavailable; Client host blocked using zen.spamhaus.org" }
      : accept
        ? "accept"
        : { code: 451, text: "4.7.650 The mail server has been temporarily rate limited due to IP reputation." };
  rig = await startDashboardRig({
    accounts: [ACCOUNT_A],
    token: OPERATOR,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
    extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]`,
  });
  routeToSink(rig.dns, "q.example", "example.org");
  const asTestApp = {
    json: async (method: string, path: string, o: { body?: unknown; auth?: string | null } = {}) => {
      const res = await rig.t.call(method, path, { body: o.body, auth: o.auth ?? undefined });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
    },
  } as unknown as TestApp;
  await verifiedSendingDomain(asTestApp, rig.dns, ACCOUNT_A, "sender.test");
  const ids = [await send("a@q.example"), await send("b@q.example")];
  bounced = await send("listed@example.org");
  for (const id of ids) await eventually(async () => (await kinds(id)).includes("soft_bounce"), 10_000, "a deferred attempt");
  await eventually(async () => (await kinds(bounced)).includes("bounce"), 10_000, "the block");
}, 60_000);

afterAll(async () => {
  await rig?.stop();
  await sink?.stop();
  if (shots.length) console.log(`queue screenshots:\n${shots.join("\n")}`);
});

describe("the Queue page", () => {
  browserTest(
    "shows the queue by destination; hold holds its recipients, release delivers them at once",
    async () => {
      const { page } = rig;
      await page.getByRole("link", { name: "Queue", exact: true }).click();
      await page.getByRole("heading", { name: "Queue" }).waitFor();
      const row = page.locator("tbody > tr", { hasText: "q.example" });
      await row.waitFor();
      expect((await row.locator("td").allTextContents()).slice(0, 4)).toEqual(["q.example", "2", "0", "no"]);
      expect(await row.textContent()).toContain("451 4.7.650 The mail server has been temporarily rate limited");
      shots.push(await pageIsClean(rig, "queue-summary"));
      await page.getByRole("button", { name: "Hold q.example" }).click();
      await page.getByRole("status").getByText("q.example: 2 recipients held.").waitFor();
      await page.getByRole("button", { name: "Release q.example" }).waitFor();
      expect((await row.locator("td").allTextContents()).slice(0, 3)).toEqual(["q.example", "0", "2"]);
      shots.push(await pageIsClean(rig, "queue-held"));
      accept = true;
      await page.getByRole("button", { name: "Release q.example" }).click();
      await page.getByRole("status").getByText("q.example: 2 recipients released.").waitFor();
      await eventually(() => sink.to("a@q.example").length === 1 && sink.to("b@q.example").length === 1, 5_000, "delivery at once");
    },
    60_000,
  );

  browserTest(
    "a bounce shows its class on the sent message's page",
    async () => {
      const { page } = rig;
      await page.goto(`${rig.http}/dashboard/sent/${bounced}?outbound=${ACCOUNT_A.outboundId}`);
      const bounce = page.locator("ol.timeline > li", { hasText: "bounce" });
      await bounce.locator(".tag", { hasText: "block" }).waitFor();
      shots.push(await pageIsClean(rig, "sent-bounce-class"));
    },
    60_000,
  );

  browserTest("an account's session gets no queue: 404", async () => {
    const signedIn = await rig.page.request.post(`${rig.http}/dashboard/session`, {
      data: { token: ACCOUNT_A.token },
      headers: { "X-Postroom-Dashboard": "1", Origin: rig.http },
    });
    expect(signedIn.status()).toBe(201);
    const cookie = /postroom_session=[^;]+/.exec(signedIn.headers()["set-cookie"] ?? "")![0];
    const res = await fetch(`${rig.http}/dashboard/api/queue`, { headers: { cookie } });
    expect(res.status).toBe(404);
    const write = await fetch(`${rig.http}/dashboard/api/queue/hold`, {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: JSON.stringify({ destination: "q.example" }),
    });
    expect(write.status).toBe(404);
  });
});
