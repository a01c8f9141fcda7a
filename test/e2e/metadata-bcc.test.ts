// Issue 34: E11's metadata (validated, in E12/E13, in every webhook event of the message,
// searchable as metadata.key:value) and bcc (delivered, in no copy's headers), the same Bcc
// rule through SMTP submission (nodemailer), to a real SMTP sink and a real webhook receiver.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import nodemailer from "nodemailer";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink } from "../helpers/sink.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";

const SECRET = "whsec_" + Buffer.from("postroom webhook test secret 123").toString("base64");
const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
const A = `/api/v0.1/${ACCOUNT_A.id}`;
const sendKey = bearer(ACCOUNT_A.smtpKey);
const token = bearer(ACCOUNT_A.token);

let t: TestApp;
let sink: SmtpSink;
let dns: TestDnsServer;
let hook: WebhookReceiver;

const send = (body: Record<string, unknown>) => t.json("POST", SEND, { auth: sendKey, body });
const list = async (query: string) =>
  (
    await t.json("GET", `${A}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}&query=${encodeURIComponent(query)}`, {
      auth: token,
    })
  ).body;
const hooked = (id: string) => hook.posts.flatMap((p) => p.body.events).filter((e: any) => e.message_id === id);
const headerLines = (raw: string) => raw.slice(0, raw.indexOf("\r\n\r\n"));

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  hook = WebhookReceiver.start(SECRET);
  for (const domain of ["example.org", "example.net"]) dns.set(domain, [{ type: "MX", exchange: "mx.sink.test", priority: 10 }]);
  dns.set("mx.sink.test", [{ type: "A", address: "127.0.0.1" }]);
  t = await startTestApp({
    dnsServer: dns.address,
    submission: true,
    accounts: [{ ...ACCOUNT_A, extra: `webhook = { url = "${hook.url}", token = "hook-token", signing_secret = "${SECRET}" }` }],
    extra: "[webhooks]\nallow_private = true",
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
  await hook.stop();
});

describe("metadata", () => {
  const metadata = { order_id: "A-1001", customer: "Ann Ö" };
  let id: string;
  beforeAll(async () => {
    const res = await send({ from: "ann@sender.test", to: ["meta1@example.org", "meta2@example.net"], subject: "m", plain: "x", metadata });
    expect(res.status).toBe(202);
    id = res.body.id;
    await eventually(() => hooked(id).filter((e) => e.kind === "delivery").length === 2, 10_000, "both deliveries at the webhook");
  });

  test("in every webhook event of the message", () => {
    const events = hooked(id);
    expect(events.map((e) => e.kind).sort()).toEqual(["delivery", "delivery", "dispatch", "dispatch", "registration", "registration"]);
    for (const e of events) expect(e.metadata).toEqual(metadata);
  });

  test("in E13 and E12, and E12 finds it by metadata.key:value", async () => {
    expect((await t.json("GET", `${A}/outbound_messages/${id}`, { auth: token })).body.metadata).toEqual(metadata);
    const found = await list("metadata.order_id:A-1001");
    expect(found.map((m: any) => m.id)).toEqual([id]);
    expect(found[0].metadata).toEqual(metadata);
    expect(await list('metadata.customer:"Ann Ö"')).toHaveLength(1);
    expect(await list("metadata.order_id:A-1002")).toHaveLength(0);
  });

  test("a message without metadata has none in E13 nor in its events (as the hosted service)", async () => {
    const res = await send({ from: "ann@sender.test", to: "plain@example.org", subject: "p", plain: "x" });
    await eventually(() => hooked(res.body.id).some((e) => e.kind === "delivery"), 10_000, "the delivery event");
    expect((await t.json("GET", `${A}/outbound_messages/${res.body.id}`, { auth: token })).body).not.toHaveProperty("metadata");
    for (const e of hooked(res.body.id)) expect(e).not.toHaveProperty("metadata");
  });

  test.each([
    ["not an object", ["a"], /^metadata: must be an object/],
    ["21 values", Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, "v"])), /^metadata: holds at most 20 values/],
    ["a key with a dash", { "order-id": "1" }, /^metadata: key "order-id" must be 1 to 40 letters, digits or underscores/],
    ["a key of 41 characters", { ["k".repeat(41)]: "1" }, /^metadata: key .* must be 1 to 40/],
    ["a number", { n: 5 }, /^metadata.n: must be string/],
    ["a value of 501 characters", { v: "x".repeat(501) }, /^metadata: value of v is longer than 500 characters/],
    ["a line break", { v: "a\r\nBcc: x@example.org" }, /^metadata: value of v must not contain line breaks or NUL/],
    ["a NUL", { v: "a\u0000b" }, /^metadata.v: must not contain control characters/],
  ])("422 naming metadata and the rule: %s", async (_name, value, error) => {
    const res = await send({ from: "ann@sender.test", to: "no@example.org", plain: "x", metadata: value });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(error);
  });
});

describe("bcc", () => {
  test("E11: delivered to the Bcc recipient, named in no copy's headers", async () => {
    const res = await send({
      from: "ann@sender.test",
      to: "seen@example.org",
      cc: "copy@example.org",
      bcc: ["Hidden One <hidden1@example.org>", "hidden2@example.net"],
      subject: "with bcc",
      plain: "x",
    });
    expect(res.status).toBe(202);
    const all = ["seen@example.org", "copy@example.org", "hidden1@example.org", "hidden2@example.net"];
    await eventually(() => all.every((r) => sink.to(r).length === 1), 10_000, "four copies");
    for (const r of all) {
      const head = headerLines(sink.to(r)[0]!.raw);
      expect(head).not.toMatch(/^bcc:/im);
      expect(head).not.toContain("hidden1");
      expect(head).not.toContain("hidden2");
    }
    const m = (await t.json("GET", `${A}/outbound_messages/${res.body.id}`, { auth: token })).body;
    expect(m.recipients.map((r: any) => [r.email, r.type])).toEqual([
      ["seen@example.org", "to"],
      ["copy@example.org", "cc"],
      ["hidden1@example.org", "bcc"],
      ["hidden2@example.net", "bcc"],
    ]);
    expect(JSON.stringify(res.body)).not.toContain("hidden");
  });

  test("E11: bcc counts against max_recipients and CR/LF in it is refused", async () => {
    const many = Array.from({ length: 20 }, (_, i) => `b${i}@example.org`);
    const res = await send({ from: "ann@sender.test", to: "x@example.org", bcc: many, plain: "x" });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/at most 20 recipients \(to, cc and bcc together\)/);
    const crlf = await send({ from: "ann@sender.test", to: "x@example.org", bcc: "a@example.org\r\nX-Evil: 1", plain: "x" });
    expect(crlf.status).toBe(422);
    expect(crlf.body.error).toMatch(/^bcc: /);
  });

  test("submission: a Bcc recipient gets the message, and the Bcc header is in no copy", async () => {
    const transport = nodemailer.createTransport({
      host: "127.0.0.1",
      port: t.app.submissionPort!,
      secure: false,
      ignoreTLS: true,
      auth: { user: ACCOUNT_A.outboundId, pass: ACCOUNT_A.smtpKey },
    });
    await transport.sendMail({
      from: "ann@sender.test",
      to: "smtp-to@example.org",
      bcc: "smtp-hidden@example.org",
      subject: "s",
      text: "x",
    });
    await eventually(() => sink.to("smtp-to@example.org").length === 1 && sink.to("smtp-hidden@example.org").length === 1, 10_000, "both");
    for (const r of ["smtp-to@example.org", "smtp-hidden@example.org"]) {
      const head = headerLines(sink.to(r)[0]!.raw);
      expect(head).not.toMatch(/^bcc:/im);
      expect(head).not.toContain("smtp-hidden");
    }
  });
});
