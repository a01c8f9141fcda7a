// Tracking and unsubscribe tokens are good for their own kind only, and only as signed
// (issue 31, finding 8): a click link's token used as an open pixel records no open, an
// open token is no click link, and a signature with a trailing "=" is refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";

let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;
let messageId: string;
let openPath: string;
let clickPath: string;

const get = (path: string) => t.call("GET", path, { headers: { "user-agent": "Browser/1.0" } });
const events = async (kind: string) =>
  (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${messageId}`, { auth: bearer(ACCOUNT_A.token) })).body.recipients[0].events.filter((e: { kind: string }) => e.kind === kind).length;
const tokenOf = (path: string) => path.split("/").pop()!.replace(/\.gif$/, "");

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  t = await startTestApp({
    dnsServer: dns.address,
    accounts: [{ ...ACCOUNT_A, extra: "tracking = { opens = true, clicks = true }" }],
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
  const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
    auth: bearer(ACCOUNT_A.smtpKey),
    body: { from: "ann@sender.test", to: "reader@example.org", subject: "news", html: '<html><body><p><a href="https://example.com/article">read</a></p></body></html>' },
  });
  expect(res.status).toBe(202);
  messageId = res.body.id;
  await eventually(() => sink.to("reader@example.org").length === 1, 10_000, "the copy");
  const raw = sink.to("reader@example.org")[0]!.raw.replace(/=\r\n/g, "").replace(/=3D/g, "=");
  clickPath = new URL(/<a href="(http:\/\/[^"]+\/t\/c\/[^"]+)"/.exec(raw)![1]!).pathname;
  openPath = new URL(/<img src="(http:\/\/[^"]+\/t\/o\/[^"]+)"/.exec(raw)![1]!).pathname;
});
afterAll(async () => {
  await t.stop();
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
