// (beyond) A sent message's source and content, retry now and cancel (the dashboard's sent
// message page), with real deliveries to an SMTP sink that defers some recipients.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";

const clock = new ManualClock(Date.parse("2026-11-24T12:00:00Z"));
let t: TestApp;
let dns: TestDnsServer;
let sink: SmtpSink;
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);

async function send(to: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
    auth: bearer(ACCOUNT_A.smtpKey),
    body: { from: "Ann <ann@sender.test>", to, subject: "Figures", plain: "Plain words", html: "<p>Rich <b>words</b></p>", ...extra },
  });
  expect(r.status).toBe(202);
  return r.body.id;
}
const statusOf = async (id: string, email: string) =>
  (
    (await t.json("GET", `${A}/outbound_messages/${id}`, { auth })).body.recipients as {
      email: string;
      status: string;
      events: { kind: string; details: Record<string, unknown> }[];
    }[]
  ).find((r) => r.email === email)!;

beforeAll(async () => {
  sink = await SmtpSink.start();
  // "later" recipients are deferred on their first attempt, accepted after.
  sink.script = (rcpt, attempt) =>
    rcpt.startsWith("later") && attempt === 1 ? { code: 451, text: "4.2.0 try again later", at: "rcpt" } : "accept";
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  t = await startTestApp({
    clock,
    dnsServer: dns.address,
    accounts: [ACCOUNT_A, ACCOUNT_B],
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nretry_delays = ["5m", "30m"]`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
});

describe("a sent message's source and content", () => {
  test("the source downloads as .eml; the content gives its headers, text, HTML and attachments", async () => {
    const id = await send("bob@example.org", {
      attachments: [{ file_name: "figures.csv", content_type: "text/csv", content: Buffer.from("a,b\n1,2\n").toString("base64") }],
    });
    const raw = await t.call("GET", `${A}/outbound_messages/${id}/raw`, { auth });
    expect(raw.status).toBe(200);
    expect(raw.headers.get("content-type")).toBe("message/rfc822");
    expect(raw.headers.get("content-disposition")).toBe(`attachment; filename="${id}.eml"`);
    const source = await raw.text();
    expect(source).toContain("Subject: Figures");
    const content = await t.json("GET", `${A}/outbound_messages/${id}/content`, { auth });
    expect(content.status).toBe(200);
    expect(content.body.headers).toContainEqual({ name: "Subject", value: "Figures" });
    expect(content.body.text.trim()).toBe("Plain words");
    expect(content.body.html).toContain("<b>words</b>");
    expect(content.body.attachments).toEqual([{ filename: "figures.csv", content_type: "text/csv", size: 8 }]);
    expect(
      (await t.json("GET", `/api/v0.1/${ACCOUNT_B.id}/outbound_messages/${id}/content`, { auth: bearer(ACCOUNT_B.token) })).status,
    ).toBe(404);
  });
});

describe("retry now and cancel", () => {
  test("retry now sends a deferred recipient again without waiting for its retry", async () => {
    const id = await send("later1@example.org");
    await eventually(async () => (await statusOf(id, "later1@example.org")).status === "soft_bounce", 10_000, "the deferral");
    await t.app.delivery.idle();
    const r = await t.json("POST", `${A}/outbound_messages/${id}/retry`, { auth });
    expect(r).toMatchObject({ status: 200, body: { due: 1 } });
    // The clock has not moved: only "retry now" makes it due.
    await eventually(async () => (await statusOf(id, "later1@example.org")).status === "delivery", 10_000, "the delivery after retry now");
    expect(sink.to("later1@example.org").length).toBe(1);
  });

  test("cancel takes a deferred recipient off the queue with an error event; it is never tried again", async () => {
    const id = await send("later2@example.org");
    await eventually(async () => (await statusOf(id, "later2@example.org")).status === "soft_bounce", 10_000, "the deferral");
    await t.app.delivery.idle();
    const r = await t.json("POST", `${A}/outbound_messages/${id}/cancel`, { auth });
    expect(r).toMatchObject({ status: 200, body: { cancelled: 1, in_delivery: 0 } });
    const after = await statusOf(id, "later2@example.org");
    expect(after.status).toBe("error");
    expect(after.events.at(-1)).toMatchObject({ kind: "error", details: { message: "cancelled from the dashboard", retried: false } });
    clock.advance(60 * 60_000);
    t.app.delivery.kick();
    await t.app.delivery.idle();
    expect(sink.attempts.get("later2@example.org")).toBe(1);
    // Nothing left to cancel or retry.
    expect((await t.json("POST", `${A}/outbound_messages/${id}/cancel`, { auth })).body).toEqual({ cancelled: 0, in_delivery: 0 });
    expect((await t.json("POST", `${A}/outbound_messages/${id}/retry`, { auth })).body).toEqual({ due: 0 });
  });
});
