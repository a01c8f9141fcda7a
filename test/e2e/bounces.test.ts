// Mail to our bounce addresses: a DSN that arrives later records a bounce for the right
// recipient (and suppresses it), an auto-reply is an auto_reply, not a bounce, and an
// address we never used is refused at RCPT.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";

let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;

const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
const message = async (id: string) =>
  (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${id}`, { auth: bearer(ACCOUNT_A.token) })).body;

async function sendAndCaptureBounceAddress(to: string): Promise<{ id: string; bounceAddress: string }> {
  const res = await t.json("POST", SEND, {
    auth: bearer(ACCOUNT_A.smtpKey),
    body: { from: "ann@sender.test", to, subject: `to ${to}`, plain: "x" },
  });
  expect(res.status).toBe(202);
  await eventually(() => sink.to(to).length === 1, 10_000, "delivery");
  return { id: res.body.id, bounceAddress: sink.to(to)[0]!.mailFrom };
}

async function deliverInbound(rcpt: string, raw: string): Promise<{ rcptReply: string; dataReply: string }> {
  const { session } = await SmtpSession.open(t.app.inboundPort!);
  try {
    await session.command("EHLO mx.remote.example");
    await session.command("MAIL FROM:<>");
    const rcptReply = await session.command(`RCPT TO:<${rcpt}>`);
    const dataReply = rcptReply.startsWith("250") ? await session.data(raw) : "";
    return { rcptReply, dataReply };
  } finally {
    await session.close();
  }
}

const dsn = (recipient: string, status: string, diagnostic: string) => `From: Mail Delivery System <MAILER-DAEMON@mx.remote.example>
To: someone
Subject: Undelivered Mail Returned to Sender
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="b1"

--b1
Content-Type: text/plain

Your message could not be delivered.

--b1
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.remote.example

Final-Recipient: rfc822; ${recipient}
Action: failed
Status: ${status}
Diagnostic-Code: smtp; ${diagnostic}

--b1--
`;

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  t = await startTestApp({
    inbound: true,
    dnsServer: dns.address,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
});

describe("bounces after delivery", () => {
  test("a DSN to the bounce address records a bounce for that recipient and suppresses it", async () => {
    const { id, bounceAddress } = await sendAndCaptureBounceAddress("later-fails@example.org");
    expect(bounceAddress).toMatch(/^bounces\+[0-9a-f-]{36}-[0-9a-f]{16}@mta\.sender\.test$/);
    const { rcptReply, dataReply } = await deliverInbound(
      bounceAddress,
      dsn("later-fails@example.org", "5.1.1", "550 5.1.1 <later-fails@example.org>: user unknown"),
    );
    expect(rcptReply).toBe("250 2.1.5 Accepted");
    expect(dataReply).toBe("250 2.0.0 Thanks, noted");
    const m = await message(id);
    expect(m.recipients[0].events.map((e: any) => e.kind)).toEqual(["registration", "dispatch", "delivery", "bounce"]);
    expect(m.recipients[0].status).toBe("bounce");
    expect(m.recipients[0].events[3].details).toMatchObject({
      mx: "mx.remote.example",
      smtp_code: 550,
      status: "5.1.1",
      bounce_class: "hard",
    });
    const again = await t.json("POST", SEND, {
      auth: bearer(ACCOUNT_A.smtpKey),
      body: { from: "ann@sender.test", to: "later-fails@example.org", subject: "again", plain: "x" },
    });
    expect((await message(again.body.id)).recipients[0].status).toBe("suppressed");
  });

  test("a delay notice is a soft_bounce and changes nothing else", async () => {
    const { id, bounceAddress } = await sendAndCaptureBounceAddress("slow@example.org");
    await deliverInbound(
      bounceAddress,
      dsn("slow@example.org", "4.4.7", "451 4.4.7 delivery delayed").replace("Action: failed", "Action: delayed"),
    );
    const m = await message(id);
    expect(m.recipients[0].events.map((e: any) => e.kind)).toEqual(["registration", "dispatch", "delivery", "soft_bounce"]);
    expect(m.recipients[0].status).toBe("delivery");
  });

  test("an out-of-office reply is an auto_reply, not a bounce", async () => {
    const { id, bounceAddress } = await sendAndCaptureBounceAddress("vacation@example.org");
    await deliverInbound(
      bounceAddress,
      "From: vacation@example.org\r\nTo: whoever\r\nSubject: Out of Office: to vacation@example.org\r\nAuto-Submitted: auto-replied\r\n\r\nI am away until Monday.\r\n",
    );
    const m = await message(id);
    expect(m.recipients[0].events.map((e: any) => e.kind)).toEqual(["registration", "dispatch", "delivery", "auto_reply"]);
    expect(m.recipients[0].status).toBe("delivery");
  });

  test("an unknown or forged bounce address is refused at RCPT", async () => {
    const forged = await deliverInbound("bounces+3f2504e0-4f89-41d3-9a0c-0305e82c3301-0123456789abcdef@mta.sender.test", "x");
    expect(forged.rcptReply).toBe("550 5.1.1 unknown bounce address");
    const { bounceAddress } = await sendAndCaptureBounceAddress("real@example.org");
    const tampered = bounceAddress.replace(/-([0-9a-f]{16})@/, (_m, id: string) => `-${id.slice(0, 15)}${id.endsWith("0") ? "1" : "0"}@`);
    expect((await deliverInbound(tampered, "x")).rcptReply).toBe("550 5.1.1 unknown bounce address");
  });
});
