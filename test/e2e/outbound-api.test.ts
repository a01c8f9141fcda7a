// Sending through the API (E11) to a real SMTP sink found through a real DNS server, and
// reading the result back (E12, E13): what arrives, byte for byte where it matters.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { simpleParser } from "mailparser";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink } from "../helpers/sink.ts";

const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const sendKey = bearer(ACCOUNT_A.smtpKey);
const token = bearer(ACCOUNT_A.token);
const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001", "hex");

let t: TestApp;
let sink: SmtpSink;
let dns: TestDnsServer;
const clock = new ManualClock(Date.parse("2026-11-22T12:00:00Z"));

const send = (body: Record<string, unknown>) => t.json("POST", SEND, { auth: sendKey, body });
const message = async (id: string) => (await t.json("GET", `${A}/outbound_messages/${id}`, { auth: token })).body;
const kinds = (m: any, email: string) => m.recipients.find((r: any) => r.email === email).events.map((e: any) => e.kind);

/**
 * Sends a message due at once and waits until it is delivered and the worker is idle. A
 * recipient that was due too has been claimed with it (or before) and its attempt is over:
 * what has not reached the sink by then was not sent.
 */
async function probeDelivered(name: string): Promise<void> {
  const to = `probe-${name}@example.org`;
  expect((await send({ from: "ann@sender.test", to, subject: "probe", plain: "x" })).status).toBe(202);
  await eventually(() => sink.to(to).length === 1, 10_000, `the probe ${to}`);
  await t.app.delivery.idle();
}

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  for (const domain of ["example.org", "example.net"]) dns.set(domain, [{ type: "MX", exchange: "mx.sink.test", priority: 10 }]);
  dns.set("mx.sink.test", [{ type: "A", address: "127.0.0.1" }]);
  dns.set("nullmx.example", [{ type: "MX", exchange: ".", priority: 0 }]);
  t = await startTestApp({
    dnsServer: dns.address,
    clock,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nretry_delays = ["5m", "30m"]\nmax_queue_time = "2h"`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
});

describe("E11 and delivery", () => {
  let id: string;
  beforeAll(async () => {
    const res = await send({
      from: "Ann Sender <ann@sender.test>",
      to: "Bob <bob@example.org>, carol@example.org",
      cc: ["dave@example.net"],
      subject: "Quarterly report ✓",
      plain: "Plain body",
      html: '<p>HTML body <img src="cid:logo"></p>',
      tags: "reports, q4",
      headers: { "Reply-To": "replies@sender.test", "X-Campaign": ["a", "b"] },
      attachments: [
        { file_name: "logo.png", content: PNG.toString("base64"), content_type: "image/png", content_id: "<logo>" },
        { file_name: "report.csv", content: Buffer.from("a,b\n1,2\n").toString("base64"), content_type: "text/csv", content_id: null },
      ],
    });
    expect(res.status).toBe(202);
    id = res.body.id;
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      from: "Ann Sender <ann@sender.test>",
      to: ["Bob <bob@example.org>", "carol@example.org"],
      cc: ["dave@example.net"],
      test_mode: false,
      subject: "Quarterly report ✓",
      tags: ["reports", "q4"],
    });
    await eventually(() => sink.messages.length >= 3, 10_000, "three deliveries");
  });

  test("each recipient gets its own copy with a bounce address naming it", () => {
    for (const rcpt of ["bob@example.org", "carol@example.org", "dave@example.net"]) {
      const [m] = sink.to(rcpt);
      expect(m!.rcptTo).toEqual([rcpt]);
      expect(m!.mailFrom).toMatch(new RegExp(`^bounces\\+${id}-[0-9a-f]{16}@mta\\.sender\\.test$`));
      expect(m!.helo).toBe("mx.postroom.test");
    }
    expect(new Set(sink.messages.map((m) => m.mailFrom)).size).toBe(3);
  });

  test("the message: headers, alternative and related parts, attachments, UTF-8", async () => {
    const raw = sink.to("bob@example.org")[0]!.raw;
    const parsed = await simpleParser(raw, { keepCidLinks: true });
    expect(parsed.from?.text).toBe('"Ann Sender" <ann@sender.test>');
    expect(parsed.to && "text" in parsed.to ? parsed.to.text : "").toBe('"Bob" <bob@example.org>, carol@example.org');
    expect(parsed.cc && "text" in parsed.cc ? parsed.cc.text : "").toBe("dave@example.net");
    expect(parsed.subject).toBe("Quarterly report ✓");
    expect(parsed.messageId).toBe(`<${id}@mx.postroom.test>`);
    expect(parsed.date?.getTime()).toBe(clock.nowMs());
    expect(parsed.replyTo?.text).toBe("replies@sender.test");
    expect(parsed.headers.get("x-campaign")).toEqual(["a", "b"]);
    expect(parsed.text?.trim()).toBe("Plain body");
    expect(parsed.html).toBe('<p>HTML body <img src="cid:logo"></p>');
    expect(parsed.attachments.map((a) => [a.filename, a.contentType, a.cid ?? null, a.content.toString("hex")])).toEqual([
      ["logo.png", "image/png", "logo", PNG.toString("hex")],
      ["report.csv", "text/csv", null, Buffer.from("a,b\n1,2\n").toString("hex")],
    ]);
    expect(raw).toContain("multipart/alternative");
    expect(raw).toContain("multipart/related");
    expect(raw).not.toMatch(/^Bcc:/m);
  });

  test("E13: every recipient with registration, dispatch and delivery, in order, with details", async () => {
    const m = await message(id);
    expect(m).toMatchObject({
      id,
      outbound_account_id: ACCOUNT_A.outboundId,
      from: "Ann Sender <ann@sender.test>",
      message_id: `<${id}@mx.postroom.test>`,
      tags: ["reports", "q4"],
      test_mode: false,
      priority: "standard",
    });
    expect(m.recipients.map((r: any) => [r.email, r.type, r.status])).toEqual([
      ["bob@example.org", "to", "delivery"],
      ["carol@example.org", "to", "delivery"],
      ["dave@example.net", "cc", "delivery"],
    ]);
    const bob = m.recipients[0];
    expect(bob.events.map((e: any) => e.kind)).toEqual(["registration", "dispatch", "delivery"]);
    expect(bob.events[2].details).toEqual({ mx: "mx.sink.test", smtp_code: 250, smtp_response: "250 OK queued as sink", attempt: 1 });
    expect(bob.events[1].details).toEqual({ mx: "mx.sink.test", smtp_code: null, smtp_response: null, attempt: 1 });
  });

  test("E12: the list carries last_event per recipient; tag: and status: search", async () => {
    const list = (await t.json("GET", `${A}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}`, { auth: token })).body;
    const listed = list.find((x: any) => x.id === id);
    expect(listed.recipients[0]).toMatchObject({
      email: "bob@example.org",
      type: "to",
      status: "delivery",
      last_event: { kind: "delivery" },
    });
    expect(
      (await t.json("GET", `${A}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}&query=tag:q4`, { auth: token })).body.map(
        (x: any) => x.id,
      ),
    ).toEqual([id]);
    expect(
      (await t.json("GET", `${A}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}&query=tag:q`, { auth: token })).body,
    ).toEqual([]);
    expect(
      (
        await t.json("GET", `${A}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}&query=status:delivery%20to:carol`, {
          auth: token,
        })
      ).body.map((x: any) => x.id),
    ).toContain(id);
    expect(
      (await t.json("GET", `${A}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}&query=quarterly`, { auth: token })).body.map(
        (x: any) => x.id,
      ),
    ).toContain(id);
  });

  test("another account's outbound account and messages are 404", async () => {
    expect((await t.json("GET", `${A}/outbound_messages?outbound_account_id=b0000000000000f2`, { auth: token })).status).toBe(404);
    expect((await t.json("GET", `/api/v0.1/b000000000000002/outbound_messages/${id}`, { auth: bearer("pr_token_account_b") })).status).toBe(
      404,
    );
  });
});

describe("the remote server's answer decides", () => {
  test("451 then 250: soft_bounce, a retry on schedule, then delivery", async () => {
    sink.script = (rcpt, n) =>
      rcpt === "retry@example.org" && n === 1 ? { code: 451, text: "greylisted, try later", at: "data" } : "accept";
    const { body } = await send({ from: "ann@sender.test", to: "retry@example.org", subject: "retry", plain: "x" });
    await eventually(async () => (await message(body.id)).recipients[0].status === "soft_bounce", 10_000, "soft bounce");
    let m = await message(body.id);
    expect(m.recipients[0].events.at(-1).details).toEqual({
      mx: "mx.sink.test",
      smtp_code: 451,
      smtp_response: "451 greylisted, try later",
      bounce_class: "transient",
      attempt: 1,
    });
    clock.advance(4 * 60_000);
    await probeDelivered("before-retry");
    expect(sink.to("retry@example.org")).toHaveLength(0);
    clock.advance(60_000);
    t.app.delivery.kick();
    await eventually(() => sink.to("retry@example.org").length === 1, 10_000, "retry delivery");
    m = await eventually(async () => {
      const x = await message(body.id);
      return x.recipients[0].status === "delivery" ? x : null;
    });
    expect(kinds(m, "retry@example.org")).toEqual(["registration", "dispatch", "soft_bounce", "dispatch", "delivery"]);
    expect(m.recipients[0].events.at(-1).details.attempt).toBe(2);
  });

  test("550 at RCPT: bounce, no retry", async () => {
    sink.script = (rcpt) => (rcpt === "gone@example.org" ? { code: 550, text: "user unknown", at: "rcpt" } : "accept");
    const { body } = await send({ from: "ann@sender.test", to: "gone@example.org", subject: "bounce", plain: "x" });
    const m = await eventually(async () => {
      const x = await message(body.id);
      return x.recipients[0].status === "bounce" ? x : null;
    });
    expect(m.recipients[0].events.at(-1).details).toEqual({
      mx: "mx.sink.test",
      smtp_code: 550,
      bounce_class: "hard",
      smtp_response: "550 user unknown",
      attempt: 1,
    });
  });

  test("a dropped connection is retried until max_queue_time, then retries_exhausted", async () => {
    sink.script = (rcpt) => (rcpt === "flaky@example.org" ? "drop" : "accept");
    const { body } = await send({ from: "ann@sender.test", to: "flaky@example.org", subject: "flaky", plain: "x" });
    await eventually(async () => (await message(body.id)).recipients[0].status === "soft_bounce", 10_000, "first failure");
    for (const step of [5, 30, 30, 30, 30]) {
      clock.advance(step * 60_000);
      t.app.delivery.kick();
      await Bun.sleep(150);
      await t.app.delivery.idle();
    }
    const m = await eventually(async () => {
      const x = await message(body.id);
      return x.recipients[0].status === "retries_exhausted" ? x : null;
    });
    const events = m.recipients[0].events;
    expect(events.at(-1)).toMatchObject({
      kind: "retries_exhausted",
      details: { attempts: events.filter((e: any) => e.kind === "dispatch").length, first_attempt_at: expect.any(String) },
    });
    expect(events.filter((e: any) => e.kind === "soft_bounce").every((e: any) => e.details.smtp_code === null)).toBe(true);
  });

  test("a null MX bounces at once without connecting", async () => {
    const { body } = await send({ from: "ann@sender.test", to: "someone@nullmx.example", subject: "null mx", plain: "x" });
    const m = await eventually(async () => {
      const x = await message(body.id);
      return x.recipients[0].status === "bounce" ? x : null;
    });
    expect(m.recipients[0].events.map((e: any) => e.kind)).toEqual(["registration", "bounce"]);
    expect(m.recipients[0].events[1].details).toEqual({
      mx: null,
      smtp_code: null,
      smtp_response: "nullmx.example does not accept mail (null MX)",
      bounce_class: "hard",
      attempt: 1,
    });
  });

  test("test mode: validated and recorded, never sent", async () => {
    const { status, body } = await send({
      from: "ann@sender.test",
      to: "test-mode@example.org",
      subject: "test",
      plain: "x",
      test_mode: true,
    });
    expect(status).toBe(202);
    expect(body.test_mode).toBe(true);
    await probeDelivered("after-test-mode");
    expect(sink.to("test-mode@example.org")).toEqual([]);
    const m = await message(body.id);
    expect(m.test_mode).toBe(true);
    expect(m.recipients[0].events.map((e: any) => [e.kind, e.details])).toEqual([["registration", { test_mode: true }]]);
  });
});

describe("an outbound account without a webhook", () => {
  test("its events are recorded and shown, but queue nothing for a webhook", async () => {
    const { body } = await send({ from: "ann@sender.test", to: "nohook@example.org", subject: "no webhook", plain: "x" });
    const m = await eventually(async () => {
      const x = await message(body.id);
      return x.recipients[0].status === "delivery" ? x : null;
    });
    expect(kinds(m, "nohook@example.org")).toEqual(["registration", "dispatch", "delivery"]);
    const outbox = t.app.store.db.query("SELECT COUNT(*) AS n FROM webhook_outbox WHERE message_id = ?").get(body.id) as { n: number };
    expect(outbox.n).toBe(0);
  });
});
