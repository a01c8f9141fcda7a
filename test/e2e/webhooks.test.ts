// Message events reach the account's webhook (E10): signed, in order per message,
// retried until acknowledged, across a restart; tracking adds open and click events;
// a hard bounce suppresses the address for later sends.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hashSecret } from "../../src/auth/secrets.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, type AccountToml } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";

const SECRET = "whsec_" + Buffer.from("postroom webhook test secret 123").toString("base64");
const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
const METRICS_TOKEN = "pr_metrics_token_for_tests";
/** webhooks.max_age by default. */
const MAX_AGE_MS = 3 * 86_400_000;
const clock = new ManualClock(Date.now());
const dir = tempDir();

let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;
let hook: WebhookReceiver;

const account = (): AccountToml => ({
  ...ACCOUNT_A,
  extra: `webhook = { url = "${hook.url}", token = "hook-token", signing_secret = "${SECRET}" }\ntracking = { opens = true, clicks = true }`,
});
const start = () =>
  startTestApp({
    dataDir: dir.path,
    clock,
    dnsServer: dns.address,
    accounts: [account()],
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
    http: `metrics_token = "${hashSecret(METRICS_TOKEN)}"`,
    // The receiver is on loopback.
    extra: "[webhooks]\nallow_private = true",
  });

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  hook = WebhookReceiver.start(SECRET);
  t = await start();
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
  await hook.stop();
  dir.remove();
});

const eventsOf = (messageId: string) => hook.acknowledged().filter((e) => e.message_id === messageId);

describe("events to the webhook", () => {
  let id: string;

  test("250 for one recipient, 550 for the other: registration, dispatch, delivery / bounce, in order, signed", async () => {
    sink.script = (rcpt) => (rcpt === "bad@example.org" ? { code: 550, text: "no such user", at: "rcpt" } : "accept");
    const res = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: {
        from: "ann@sender.test",
        to: ["good@example.org", "bad@example.org"],
        subject: "hello",
        html: '<p>Hi <a href="https://example.com/welcome?a=1&amp;b=2">there</a></p>',
        plain: "Hi",
      },
    });
    expect(res.status).toBe(202);
    id = res.body.id;
    await eventually(() => eventsOf(id).length >= 6, 10_000, "six events");
    const good = eventsOf(id)
      .filter((e) => e.recipient === "good@example.org")
      .map((e) => e.kind);
    const bad = eventsOf(id)
      .filter((e) => e.recipient === "bad@example.org")
      .map((e) => e.kind);
    expect(good).toEqual(["registration", "dispatch", "delivery"]);
    expect(bad).toEqual(["registration", "dispatch", "bounce"]);
    const bounce = eventsOf(id).find((e) => e.kind === "bounce");
    expect(bounce).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      kind: "bounce",
      recipient: "bad@example.org",
      message_id: id,
      outbound_account_id: ACCOUNT_A.outboundId,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      details: { mx: "mx.sink.test", smtp_code: 550, smtp_response: "550 no such user", attempt: 1, bounce_class: "hard" },
    });
    for (const post of hook.posts) {
      expect(post.verified).toBe(true);
      expect(post.headers.authorization).toBe("Bearer hook-token");
      expect(post.headers["webhook-id"]).toStartWith("msg_");
      expect(post.body.events.length).toBeGreaterThanOrEqual(1);
      expect(post.body.events.length).toBeLessThanOrEqual(100);
    }
  });

  test("opening the pixel and following a link (with fetch, as a mail client would) give open and click events", async () => {
    const raw = sink.to("good@example.org")[0]!.raw.replace(/=\r\n/g, "").replace(/=3D/g, "=");
    const pixel = /<img src="(http:\/\/127\.0\.0\.1:8080\/t\/o\/[^"]+)"/.exec(raw)![1]!;
    const link = /<a href="(http:\/\/127\.0\.0\.1:8080\/t\/c\/[^"]+)"/.exec(raw)![1]!;
    const open = await t.call("GET", new URL(pixel).pathname, { headers: { "user-agent": "MailClient/1.0" } });
    expect(open.status).toBe(200);
    expect(open.headers.get("content-type")).toBe("image/gif");
    const click = await t.call("GET", new URL(link).pathname, { headers: { "user-agent": "MailClient/1.0" } });
    expect(click.status).toBe(302);
    expect(click.headers.get("location")).toBe("https://example.com/welcome?a=1&b=2");
    // Altered tokens are 404, never a redirect somewhere else.
    const path = new URL(link).pathname;
    const altered = path.slice(0, -3) + (path.at(-3) === "A" ? "B" : "A") + path.slice(-2);
    expect(altered).not.toBe(path);
    expect((await t.call("GET", altered)).status).toBe(404);
    expect((await t.call("GET", "/t/c/eyJtIjoieCIsInIiOiJ5IiwidSI6Imh0dHBzOi8vZXZpbC5leGFtcGxlIn0.AAAAAAAAAAAAAAAAAAAAAA")).status).toBe(
      404,
    );

    await eventually(() => eventsOf(id).some((e) => e.kind === "click"), 10_000, "click event");
    const open1 = eventsOf(id).find((e) => e.kind === "open");
    const click1 = eventsOf(id).find((e) => e.kind === "click");
    expect(open1).toMatchObject({ recipient: "good@example.org", details: { user_agent: "MailClient/1.0" } });
    expect(click1).toMatchObject({
      recipient: "good@example.org",
      details: { url: "https://example.com/welcome?a=1&b=2", user_agent: "MailClient/1.0" },
    });
    const m = (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${id}`, { auth: bearer(ACCOUNT_A.token) })).body;
    const good = m.recipients.find((r: any) => r.email === "good@example.org");
    expect(good.events.map((e: any) => e.kind)).toEqual(["registration", "dispatch", "delivery", "open", "click"]);
    expect(good.status).toBe("click");
  });

  test("a second send to the bounced address is suppressed and never reaches the sink", async () => {
    const before = sink.to("bad@example.org").length;
    const res = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "ann@sender.test", to: "bad@example.org", subject: "again", plain: "x" },
    });
    expect(res.status).toBe(202);
    await eventually(() => eventsOf(res.body.id).length === 2, 10_000, "registration and suppressed");
    expect(eventsOf(res.body.id).map((e) => e.kind)).toEqual(["registration", "suppressed"]);
    // A message due at once, sent after it: once it is delivered (its events at the webhook)
    // and the worker idle, a copy to bad@ that was queued all the same would have gone too.
    const probe = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "ann@sender.test", to: "probe@example.org", subject: "probe", plain: "x" },
    });
    await eventually(() => eventsOf(probe.body.id).some((e) => e.kind === "delivery"), 10_000, "the probe's delivery at the webhook");
    await t.app.delivery.idle();
    expect(sink.to("bad@example.org").length).toBe(before);
    expect(eventsOf(res.body.id).map((e) => e.kind)).toEqual(["registration", "suppressed"]);
    const list = (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/suppressions?query=bad@`, { auth: bearer(ACCOUNT_A.token) })).body;
    expect(list).toEqual([
      {
        id: expect.any(String),
        outbound_account_id: ACCOUNT_A.outboundId,
        email: "bad@example.org",
        reason: "bounce",
        details: expect.objectContaining({ smtp_code: 550, bounce_class: "hard" }),
        created_at: expect.any(String),
        expires_at: expect.any(String),
      },
    ]);
    // A hard bounce suppresses for outbound.suppression_ttl (90 days by default).
    expect(Date.parse(list[0].expires_at) - Date.parse(list[0].created_at)).toBe(90 * 24 * 3600 * 1000);
    // Taken off the list, the address gets mail again.
    expect((await t.json("DELETE", `/api/v0.1/${ACCOUNT_A.id}/suppressions/${list[0].id}`, { auth: bearer(ACCOUNT_A.token) })).status).toBe(
      202,
    );
  });
});

describe("retries", () => {
  test("500 three times then 200: the events arrive once acknowledged, in order, across a restart", async () => {
    hook.script.push(500, 500, 500);
    const postsBefore = hook.posts.length;
    const res = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "ann@sender.test", to: "retry@example.org", subject: "retry", plain: "x" },
    });
    const id = res.body.id;
    await eventually(() => hook.posts.length >= postsBefore + 1, 10_000, "first failed POST");
    // Delivery finishes meanwhile; the failed batch holds back everything after it.
    await eventually(() => sink.to("retry@example.org").length === 1, 10_000, "delivery");
    // The receiver has answered, but the dispatcher may not have planned its retry yet: a
    // clock moved before that would put the retry after the new time, never due.
    await t.app.webhooks.idle();
    clock.advance(11_000);
    t.app.webhooks.kick();
    await eventually(() => hook.posts.length >= postsBefore + 2, 10_000, "second failed POST");
    await t.app.webhooks.idle();

    // Restart between two retries: nothing is lost.
    await t.app.stop();
    t = await start();
    clock.advance(70_000);
    t.app.webhooks.kick();
    await eventually(() => hook.posts.length >= postsBefore + 3, 10_000, "third failed POST");
    await t.app.webhooks.idle();
    clock.advance(330_000);
    t.app.webhooks.kick();
    await eventually(() => eventsOf(id).length === 3, 10_000, "acknowledged events");
    expect(eventsOf(id).map((e) => e.kind)).toEqual(["registration", "dispatch", "delivery"]);
    // The failed POSTs carried the same batch each time (same webhook-id), acknowledged once.
    const mine = hook.posts.slice(postsBefore).filter((p) => p.body.events.some((e: any) => e.message_id === id));
    expect(mine.map((p) => p.status)).toEqual([500, 500, 500, 200, ...mine.slice(4).map(() => 200)]);
    expect(new Set(mine.slice(0, 4).map((p) => p.headers["webhook-id"])).size).toBe(1);
    expect(hook.acknowledged().filter((e) => e.message_id === id).length).toBe(3);
  });
});

describe("a receiver that never acknowledges", () => {
  /** The value of a series on /metrics (its name with its labels, as written there). */
  const metric = async (name: string): Promise<number> => {
    const text = await (await t.call("GET", "/metrics", { auth: `Bearer ${METRICS_TOKEN}` })).text();
    const line = text.split("\n").find((l) => l.startsWith(`${name} `));
    if (!line) throw new Error(`no ${name} on /metrics:\n${text}`);
    return Number(line.slice(name.length + 1));
  };

  test("its events wait (counted on /metrics), then expire after webhooks.max_age, counted too", async () => {
    hook.script.push(...Array.from({ length: 50 }, () => 503));
    const postsBefore = hook.posts.length;
    const expiredBefore = await metric("postroom_webhook_events_expired_total");
    const res = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "ann@sender.test", to: "never@example.org", subject: "never", plain: "x" },
    });
    expect(res.status).toBe(202);
    await eventually(() => sink.to("never@example.org").length === 1, 10_000, "delivery");
    await eventually(() => hook.posts.length > postsBefore, 10_000, "a refused POST");
    // The sink has the message a moment before Postroom has recorded the outcome.
    await eventually(
      async () =>
        (await metric('postroom_outbound_recipients_queued{state="due"}')) +
          (await metric('postroom_outbound_recipients_queued{state="scheduled"}')) ===
        0,
      10_000,
      "nothing queued once delivered",
    );
    await eventually(async () => (await metric("postroom_webhook_events_pending")) === 3, 10_000, "3 pending events");

    clock.advance(MAX_AGE_MS + 60_000);
    t.app.webhooks.kick();
    await eventually(async () => (await metric("postroom_webhook_events_pending")) === 0, 10_000, "the events expired");
    expect((await metric("postroom_webhook_events_expired_total")) - expiredBefore).toBe(3);
    expect(eventsOf(res.body.id)).toEqual([]);
    hook.script.length = 0;
  });
});
