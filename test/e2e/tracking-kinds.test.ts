// Tracking and unsubscribe tokens are good for their own kind only, and only as signed
// (issue 31, finding 8): a click link's token used as an open pixel records no open, an
// open token is no click link, and a signature with a trailing "=" is refused. The
// List-Unsubscribe URL is signed: Postroom checks it, then passes the one-click POST on to
// the account's unsubscribe.url (a real HTTP target), signed as its webhooks are.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { TestTarget } from "../helpers/target.ts";

let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;
let messageId: string;
let openPath: string;
let clickPath: string;
let unsubscribePath: string;
let listUnsubscribe: string;
let target: TestTarget;
const SIGNING_SECRET = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;

const get = (path: string) => t.call("GET", path, { headers: { "user-agent": "Browser/1.0" } });
const events = async (kind: string) =>
  (
    await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${messageId}`, { auth: bearer(ACCOUNT_A.token) })
  ).body.recipients[0].events.filter((e: { kind: string }) => e.kind === kind).length;
const tokenOf = (path: string) =>
  path
    .split("/")
    .pop()!
    .replace(/\.gif$/, "");

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  target = TestTarget.start();
  t = await startTestApp({
    dnsServer: dns.address,
    extra: "[webhooks]\nallow_private = true",
    accounts: [
      {
        ...ACCOUNT_A,
        extra: [
          "tracking = { opens = true, clicks = true }",
          `unsubscribe = { url = "${target.url("/unsubscribe")}?list=news", mailto = "unsubscribe@sender.test" }`,
          `webhook = { url = "${target.url("/events")}", token = "hook-token", signing_secret = "${SIGNING_SECRET}" }`,
        ].join("\n"),
      },
    ],
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
  const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
    auth: bearer(ACCOUNT_A.smtpKey),
    body: {
      from: "ann@sender.test",
      to: "reader@example.org",
      subject: "news",
      html: '<html><body><p><a href="https://example.com/article">read</a></p></body></html>',
    },
  });
  expect(res.status).toBe(202);
  messageId = res.body.id;
  await eventually(() => sink.to("reader@example.org").length === 1, 10_000, "the copy");
  const raw = sink.to("reader@example.org")[0]!.raw.replace(/=\r\n/g, "").replace(/=3D/g, "=");
  clickPath = new URL(/<a href="(http:\/\/[^"]+\/t\/c\/[^"]+)"/.exec(raw)![1]!).pathname;
  openPath = new URL(/<img src="(http:\/\/[^"]+\/t\/o\/[^"]+)"/.exec(raw)![1]!).pathname;
  listUnsubscribe = /^List-Unsubscribe:(.*(?:\r\n[ \t].*)*)/m.exec(sink.to("reader@example.org")[0]!.raw)![1]!.replace(/\r\n[ \t]/g, " ");
  unsubscribePath = new URL(/<(http:\/\/[^>]+\/t\/u\/[^>]+)>/.exec(listUnsubscribe)![1]!).pathname;
});
afterAll(async () => {
  await t.stop();
  await target.stop();
  await sink.stop();
  await dns.stop();
});

describe("tokens of one kind only", () => {
  test("a click link's token fetched as the open pixel is 404 and records no open", async () => {
    expect((await get(`/t/o/${tokenOf(clickPath)}.gif`)).status).toBe(404);
    expect(await events("open")).toBe(0);
  });

  test("an open pixel's token used as a click link is 404 and records no click", async () => {
    expect((await get(`/t/c/${tokenOf(openPath)}`)).status).toBe(404);
    expect(await events("click")).toBe(0);
  });

  test("a signature with a trailing = (or two) is 404 for both", async () => {
    expect((await get(`/t/o/${tokenOf(openPath)}=.gif`)).status).toBe(404);
    expect((await get(`/t/c/${tokenOf(clickPath)}=`)).status).toBe(404);
    expect((await get(`/t/c/${tokenOf(clickPath)}==`)).status).toBe(404);
    expect(await events("open")).toBe(0);
    expect(await events("click")).toBe(0);
  });

  test("each as issued works for its own kind", async () => {
    expect((await get(openPath)).status).toBe(200);
    const click = await get(clickPath);
    expect(click.status).toBe(302);
    expect(click.headers.get("location")).toBe("https://example.com/article");
    expect(await events("open")).toBe(1);
    expect(await events("click")).toBe(1);
  });
});

describe("List-Unsubscribe URLs are signed", () => {
  const post = (path: string) =>
    t.call("POST", path, { body: "List-Unsubscribe=One-Click", headers: { "content-type": "application/x-www-form-urlencoded" } });
  const relayed = () => target.at("/unsubscribe");

  test("the header names Postroom's signed URL (never the account's URL with claims in its query) and the mailbox", () => {
    expect(listUnsubscribe).toMatch(
      /^ <http:\/\/127\.0\.0\.1:8080\/t\/u\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}>, <mailto:unsubscribe@sender\.test\?subject=unsubscribe%20[0-9a-f-]{36}>$/,
    );
    expect(listUnsubscribe).not.toContain(target.url("/unsubscribe"));
    expect(sink.to("reader@example.org")[0]!.raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r$/m);
  });

  test("unsigned, forged, padded or another kind's token: 404, and nothing is passed on", async () => {
    const token = tokenOf(unsubscribePath);
    const [payload, sig] = token.split(".") as [string, string];
    const forgedPayload = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), a: "ceo@example.org" }),
    ).toString("base64url");
    for (const path of [
      `/t/u/${payload}`,
      `/t/u/${forgedPayload}.${sig}`,
      `/t/u/${payload}.${sig.slice(0, -1)}${sig.endsWith("A") ? "B" : "A"}`,
      `/t/u/${token}=`,
      `/t/u/${tokenOf(openPath)}`,
      `/t/u/${tokenOf(clickPath)}`,
    ]) {
      expect((await post(path)).status).toBe(404);
      expect((await get(path)).status).toBe(404);
    }
    expect(relayed()).toHaveLength(0);
    // Nor is an unsubscribe token an open pixel or a click link.
    expect((await get(`/t/o/${token}.gif`)).status).toBe(404);
    expect((await get(`/t/c/${token}`)).status).toBe(404);
  });

  test("GET shows a page whose button POSTs, and unsubscribes nobody (link scanners fetch URLs)", async () => {
    const res = await get(unsubscribePath);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<form method="post">');
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(html).toContain("reader@example.org");
    expect(relayed()).toHaveLength(0);
  });

  test("the one-click POST is passed on to unsubscribe.url, with the message and recipient, signed as the account's webhooks", async () => {
    const res = await post(unsubscribePath);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("You are unsubscribed.");
    const [r] = relayed();
    expect(r!.method).toBe("POST");
    expect(r!.headers.authorization).toBe("Bearer hook-token");
    const body = new TextDecoder().decode(r!.raw);
    expect(Object.fromEntries(new URLSearchParams(body))).toEqual({
      "List-Unsubscribe": "One-Click",
      message_id: messageId,
      recipient: "reader@example.org",
    });
    // Standard Webhooks: v1,<Base64 HMAC-SHA256 of "id.timestamp.body"> under the secret's key.
    const key = Buffer.from(SIGNING_SECRET.slice("whsec_".length), "base64");
    const signed = `${r!.headers["webhook-id"]}.${r!.headers["webhook-timestamp"]}.${body}`;
    expect(r!.headers["webhook-signature"]).toBe(`v1,${createHmac("sha256", key).update(signed).digest("base64")}`);
  });

  test("the same link POSTed 20 times at once while the app is slow: one request reaches the app", async () => {
    target.answers.set("/unsubscribe", { status: 200, body: "ok", delayMs: 300 });
    const before = relayed().length;
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => post(unsubscribePath)));
      expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(relayed().length - before).toBe(1);
    } finally {
      target.answers.delete("/unsubscribe");
    }
  });

  test("when the account's URL fails, the page says so (502)", async () => {
    target.answers.set("/unsubscribe", { status: 500, body: "down" });
    try {
      expect((await post(unsubscribePath)).status).toBe(502);
    } finally {
      target.answers.delete("/unsubscribe");
    }
  });
});
