// The webhook page's API ((beyond) GET/POST .../webhook): what a receiver answered to each
// POST, the backlog, "retry now" and the test POST, against a real receiver that checks
// the signatures, with real deliveries to an SMTP sink.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";

const SECRET = "whsec_" + Buffer.from("postroom webhook page test secret").toString("base64");
const clock = new ManualClock(Date.now());
let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;
let hook: WebhookReceiver;
const auth = bearer(ACCOUNT_A.token);
const page = (path = "") => t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/webhook${path}?outbound_account_id=${ACCOUNT_A.outboundId}`, { auth });

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  hook = WebhookReceiver.start(SECRET);
  t = await startTestApp({
    clock,
    dnsServer: dns.address,
    accounts: [
      { ...ACCOUNT_A, extra: `webhook = { url = "${hook.url}?key=s3cret", token = "hook-token", signing_secret = "${SECRET}" }` },
      ACCOUNT_B,
    ],
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
    extra: "[webhooks]\nallow_private = true",
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
  await hook.stop();
});

describe("the webhook page", () => {
  test("a refused POST shows with the receiver's status and answer; retry now posts the backlog at once", async () => {
    hook.script.push(503);
    const sent = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "ann@sender.test", to: "bob@example.org", subject: "hi", plain: "x" },
    });
    expect(sent.status).toBe(202);
    await eventually(() => hook.posts.length >= 1, 10_000, "the first POST");
    await t.app.webhooks.idle();

    const before = await page();
    expect(before.status).toBe(200);
    expect(before.body.webhook).toEqual({ url: `${new URL(hook.url).origin}/hook?…`, signed: true });
    expect(before.body.pending.events).toBeGreaterThan(0);
    expect(Date.parse(before.body.pending.next_attempt_at)).toBeGreaterThan(clock.nowMs());
    expect(before.body.posts[0]).toMatchObject({
      status: 503,
      problem: "try later",
      test: false,
      webhook_id: hook.posts[0]!.headers["webhook-id"],
    });

    clock.advance(1000);
    const retry = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/webhook/retry?outbound_account_id=${ACCOUNT_A.outboundId}`, { auth });
    expect(retry.status).toBe(200);
    expect(retry.body.pending).toBe(before.body.pending.events);
    // No clock moved: the POST comes because it was made due now.
    await eventually(() => hook.posts.some((p) => p.status === 200), 10_000, "the retried POST");
    await eventually(async () => (await page()).body.pending.events === 0, 10_000, "an empty backlog");
    const after = await page();
    expect(after.body.posts.map((p: { status: number }) => p.status)).toEqual([200, 503]);
  });

  test("a receiver's answer holding NUL is kept with U+FFFD in its place (no NUL reaches the store)", async () => {
    hook.script.push(500);
    hook.bodies.push("broken\u0000answer");
    clock.advance(1000);
    const r = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/webhook/test?outbound_account_id=${ACCOUNT_A.outboundId}`, { auth });
    expect(r.body).toMatchObject({ status: 500, problem: "broken\uFFFDanswer", test: true });
    expect((await page("/posts")).body[0]).toMatchObject({ status: 500, problem: "broken\uFFFDanswer" });
  });

  test("the test POST carries one signed sample event and answers with what the receiver said", async () => {
    const n = hook.posts.length;
    clock.advance(1000);
    const r = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/webhook/test?outbound_account_id=${ACCOUNT_A.outboundId}`, { auth });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 200, problem: "", test: true, events: 1 });
    const got = hook.posts[n]!;
    expect(got.verified).toBe(true);
    expect(got.headers.authorization).toBe("Bearer hook-token");
    expect(got.body.events).toEqual([
      expect.objectContaining({
        kind: "delivery",
        message_id: "00000000-0000-0000-0000-000000000000",
        details: expect.objectContaining({ test: true }),
      }),
    ]);
    expect((await page("/posts")).body[0]).toMatchObject({ test: true, status: 200 });
  });

  test("another account's outbound account is 404; an outbound account without a webhook is 422", async () => {
    expect((await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/webhook?outbound_account_id=${ACCOUNT_B.outboundId}`, { auth })).status).toBe(
      404,
    );
    const none = await t.json("POST", `/api/v0.1/${ACCOUNT_B.id}/webhook/test?outbound_account_id=${ACCOUNT_B.outboundId}`, {
      auth: bearer(ACCOUNT_B.token),
    });
    expect(none).toMatchObject({
      status: 422,
      body: {
        status: 422,
        error:
          "outbound_account_id: has no webhook configured: set accounts.outbound.webhook.url (or the account's accounts.webhook.url) in the config",
      },
    });
    expect(
      (
        await t.json("GET", `/api/v0.1/${ACCOUNT_B.id}/webhook?outbound_account_id=${ACCOUNT_B.outboundId}`, {
          auth: bearer(ACCOUNT_B.token),
        })
      ).body.webhook,
    ).toBeNull();
  });
});
