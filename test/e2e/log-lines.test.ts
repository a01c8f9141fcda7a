// The log ties together (issue 17): one message received over real SMTP (nodemailer) and
// posted to a real HTTP target, and one sent through E11 to a real SMTP sink, each found
// in the captured JSON lines by one id, with sender, recipient, Message-ID and outcome;
// refused recipients and API 422s logged at info with what the client was told, no secret.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import nodemailer from "nodemailer";
import { LOG_FIELDS } from "../../src/lib/log-fields.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { TestTarget } from "../helpers/target.ts";

type Line = Record<string, unknown> & { msg: string; level: string };

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const token = bearer(ACCOUNT_A.token);
const sendKey = bearer(ACCOUNT_A.smtpKey);
/** The lines about mail and API requests: every field they carry is a documented one. */
const MAIL_MESSAGES = [
  "inbound posted",
  "inbound recipient refused",
  "inbound message refused",
  "outbound message queued",
  "outbound attempt",
  "submission refused",
  "http request",
];

let t: TestApp;
let target: TestTarget;
let sink: SmtpSink;
let dns: TestDnsServer;
const lines: Line[] = [];
const withField = (key: string, value: unknown) => lines.filter((l) => l[key] === value);

beforeAll(async () => {
  target = TestTarget.start();
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  t = await startTestApp({
    inbound: true,
    submission: true,
    smtp: 'max_message_size = "64KB"',
    dnsServer: dns.address,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
    logger: createLogger({ level: "info", sink: (l) => lines.push(JSON.parse(l)) }),
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await target.stop();
  await sink.stop();
  await dns.stop();
});

describe("one received message, followed by its message_id", () => {
  let address: { id: string; email: string };
  let status: { id: string; message_id: string; x_postroom_message_id: string | null };
  let delivered: Line;

  beforeAll(async () => {
    const created = await t.json("POST", `${A}/addresses`, { auth: token, body: { target: target.url("/hook"), target_format: "json+n" } });
    expect(created.status).toBe(201);
    address = created.body;
    const sent = await sendWithNodemailer(t.app.inboundPort!, {
      from: "ann@sender.test",
      to: address.email,
      subject: "Invoice 7",
      messageId: "<log-lines-1@sender.test>",
      text: "hello",
    });
    expect(sent.code).toBe(250);
    const statuses = await t.json("GET", `${A}/incoming_statuses?address_id=${address.id}`, { auth: token });
    expect(statuses.body).toHaveLength(1);
    status = statuses.body[0];
    const found = lines.filter((l) => l.msg === "inbound posted" && l.address_id === address.id);
    expect(found).toHaveLength(1);
    delivered = found[0]!;
  });

  test("the delivered line names sender, recipient, Message-ID, the incoming status and the reply sent", () => {
    expect(delivered).toMatchObject({
      level: "info",
      from: "ann@sender.test",
      to: address.email,
      message_id_header: "log-lines-1@sender.test",
      status_id: status.id,
      status: "200",
      reply: "250 2.0.0 Accepted",
      ip: "127.0.0.1",
      tls: null,
    });
    expect(status.message_id).toBe("log-lines-1@sender.test");
    expect(delivered.message_id).toMatch(/^[0-9a-f]{16}$/);
    expect(delivered.session_id).toEqual(expect.any(String));
  });

  test("the X-Postroom-Message-Id the target received is in E6, found by it, and on the line with the status id", async () => {
    const posts = target.at("/hook");
    expect(posts).toHaveLength(1);
    const header = posts[0]!.headers["x-postroom-message-id"]!;
    expect(header).toMatch(/^[0-9a-f]{32}$/);
    expect(status.x_postroom_message_id).toBe(header);
    const found = await t.json("GET", `${A}/incoming_statuses?address_id=${address.id}&query=x_postroom_message_id:${header}`, {
      auth: token,
    });
    expect(found.body.map((s: { id: string }) => s.id)).toEqual([status.id]);
    const other = await t.json(
      "GET",
      `${A}/incoming_statuses?address_id=${address.id}&query=x_postroom_message_id:${header.slice(0, 31)}`,
      { auth: token },
    );
    expect(other.body).toEqual([]);
    expect(withField("x_postroom_message_id", header).map((l) => l.status_id)).toEqual([status.id]);
  });

  test("the message_id is our Received line's id, and every line of the session names the session", () => {
    const received = JSON.stringify(target.at("/hook")[0]!.json.headers.received);
    expect(received).toContain(`id ${delivered.message_id as string}`);
    const ofMessage = withField("message_id", delivered.message_id);
    expect(ofMessage.map((l) => l.msg)).toEqual(["inbound posted"]);
    for (const l of withField("session_id", delivered.session_id)) expect(l).toMatchObject({ ip: "127.0.0.1" });
  });
});

describe("one E11 send, followed by its message UUID", () => {
  let id: string;
  let ofMessage: Line[];

  beforeAll(async () => {
    const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: sendKey,
      body: { from: "Ann <ann@sender.test>", to: "bob@example.org", subject: "Report", plain: "x" },
    });
    expect(res.status).toBe(202);
    id = res.body.id;
    await eventually(() => sink.to("bob@example.org").length === 1, 10_000, "the message at the sink");
    await t.app.delivery.idle();
    ofMessage = withField("message_id", id);
  });

  test("the 202's request line, the queued line and the attempt line all carry the UUID", () => {
    expect(ofMessage.map((l) => l.msg)).toEqual(["outbound message queued", "http request", "outbound attempt"]);
    const [queued, request, attempt] = ofMessage as [Line, Line, Line];
    expect(request).toMatchObject({ method: "POST", status: 202, account_id: ACCOUNT_A.outboundId });
    expect(queued.request_id).toBe(request.request_id);
    const messageIdHeader = `<${id}@mx.postroom.test>`;
    expect(queued).toMatchObject({
      from: "Ann <ann@sender.test>",
      to: "bob@example.org",
      message_id_header: messageIdHeader,
      source: "api",
      outbound_account_id: ACCOUNT_A.outboundId,
    });
    expect(attempt).toMatchObject({
      from: "Ann <ann@sender.test>",
      to: "bob@example.org",
      message_id_header: messageIdHeader,
      verdict: "delivered",
      smtp_code: 250,
      mx: "mx.sink.test",
      attempt: 1,
    });
    expect(attempt.reply).toStartWith("250");
    expect(sink.to("bob@example.org")[0]!.raw).toContain(`Message-ID: ${messageIdHeader}`);
  });
});

describe("one message submitted over SMTP, followed by its message UUID", () => {
  test("the queued line names the session, and the attempt line the outcome", async () => {
    const sent = await sendWithSubmission({
      from: "ann@sender.test",
      to: "carol@example.org",
      subject: "Submitted",
      messageId: "<log-lines-2@sender.test>",
      text: "x",
    });
    const id = /Queued as: ([0-9a-f-]{36})/.exec(sent)![1]!;
    await eventually(() => sink.to("carol@example.org").length === 1, 10_000, "the submitted message at the sink");
    await t.app.delivery.idle();
    const ofMessage = withField("message_id", id);
    expect(ofMessage.map((l) => l.msg)).toEqual(["outbound message queued", "outbound attempt"]);
    expect(ofMessage[0]).toMatchObject({
      source: "submission",
      from: "ann@sender.test",
      to: "carol@example.org",
      message_id_header: "<log-lines-2@sender.test>",
      ip: "127.0.0.1",
      outbound_account_id: ACCOUNT_A.outboundId,
    });
    expect(ofMessage[0]!.session_id).toEqual(expect.any(String));
    expect(ofMessage[1]).toMatchObject({
      to: "carol@example.org",
      message_id_header: "<log-lines-2@sender.test>",
      verdict: "delivered",
      smtp_code: 250,
    });
  });
});

/** Submits with nodemailer (AUTH PLAIN without TLS, as the test config allows); the 250's text. */
async function sendWithSubmission(mail: Record<string, string>): Promise<string> {
  const transport = nodemailer.createTransport({
    host: "127.0.0.1",
    port: t.app.submissionPort!,
    secure: false,
    ignoreTLS: true,
    auth: { user: ACCOUNT_A.outboundId, pass: ACCOUNT_A.smtpKey },
  });
  try {
    return (await transport.sendMail(mail)).response;
  } finally {
    transport.close();
  }
}

describe("refusals are logged with the reply sent", () => {
  test("RCPT TO an unknown address (550 5.1.1) and to a foreign domain (550 5.7.1), on the session's lines", async () => {
    const { session } = await SmtpSession.open(t.app.inboundPort!);
    await session.command("EHLO client.example.org");
    expect(await session.command("MAIL FROM:<probe@sender.test>")).toStartWith("250");
    expect(await session.command("RCPT TO:<00000000000000000000@in.postroom.test>")).toStartWith("550 5.1.1");
    expect(await session.command("RCPT TO:<someone@elsewhere.example>")).toStartWith("550 5.7.1");
    await session.command("QUIT");
    const refused = lines.filter((l) => l.msg === "inbound recipient refused" && l.from === "probe@sender.test");
    expect(refused.map((l) => [l.level, l.to, l.reply])).toEqual([
      ["info", "00000000000000000000@in.postroom.test", "550 5.1.1 no such recipient here"],
      ["info", "someone@elsewhere.example", "550 5.7.1 relay not permitted"],
    ]);
    // One session, one transaction: both lines carry the same ids.
    expect(new Set(refused.map((l) => `${l.session_id} ${l.message_id}`)).size).toBe(1);
  });

  test("a message over max_message_size: 552 at the end of DATA, and a line with the reply and the status E6 records", async () => {
    const created = await t.json("POST", `${A}/addresses`, { auth: token, body: { target: target.url("/big"), target_format: "json+n" } });
    const sent = await sendWithNodemailer(t.app.inboundPort!, {
      from: "big@sender.test",
      to: created.body.email,
      subject: "big",
      text: "x".repeat(100 * 1024),
    });
    expect(sent.code).toBe(552);
    const statuses = (await t.json("GET", `${A}/incoming_statuses?address_id=${created.body.id}`, { auth: token })).body;
    const refused = lines.filter((l) => l.msg === "inbound message refused" && l.from === "big@sender.test");
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      level: "info",
      to: created.body.email,
      address_id: created.body.id,
      status_id: statuses[0].id,
      status: "rejected",
      reply: "552 5.3.4 message exceeds the size limit of 65536 bytes",
    });
    expect(statuses[0].x_postroom_message_id).toBeNull();
  });

  test("submission: a message without a From is refused at the end of DATA, logged with the reply and the session", async () => {
    const { session } = await SmtpSession.open(t.app.submissionPort!);
    await session.command("EHLO client.example.org");
    expect(
      await session.command(`AUTH PLAIN ${Buffer.from(`\0${ACCOUNT_A.outboundId}\0${ACCOUNT_A.smtpKey}`).toString("base64")}`),
    ).toStartWith("235");
    await session.command("MAIL FROM:<ann@sender.test>");
    await session.command("RCPT TO:<dave@example.org>");
    const answer = await session.data("To: dave@example.org\r\nSubject: no author\r\n\r\nx\r\n");
    expect(answer).toStartWith("550 5.7.1");
    await session.command("QUIT");
    const line = lines.findLast((l) => l.msg === "submission refused")!;
    expect(line).toMatchObject({
      level: "info",
      at: "end of DATA",
      from: "ann@sender.test",
      reply: answer,
      outbound_account_id: ACCOUNT_A.outboundId,
      ip: "127.0.0.1",
    });
    expect(line.session_id).toEqual(expect.any(String));
  });

  test("an E11 422 is logged with its sentence, and no credential of the request", async () => {
    const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: sendKey,
      body: { from: "ann@sender.test", to: "not an address", plain: "x" },
    });
    expect(res.status).toBe(422);
    const line = lines.findLast((l) => l.msg === "http request" && l.status === 422)!;
    expect(line).toMatchObject({ level: "info", method: "POST", error: res.body.error, account_id: ACCOUNT_A.outboundId });
    expect(res.body.error).toContain("to");
  });

  test("an E2 422 with credentials in the target URL: the sentence is logged, the password is not", async () => {
    const res = await t.json("POST", `${A}/addresses`, {
      auth: token,
      body: { target: target.url("/x", "hook:pw-in-target-9f3"), target_format: "xml" },
    });
    expect(res.status).toBe(422);
    expect(lines.findLast((l) => l.msg === "http request")).toMatchObject({ status: 422, error: res.body.error, account_id: ACCOUNT_A.id });
    const all = JSON.stringify(lines);
    for (const secret of ["pw-in-target-9f3", ACCOUNT_A.token, ACCOUNT_A.smtpKey]) expect(all).not.toContain(secret);
  });
});

test("every field of the lines about mail and API requests is a documented one (src/lib/log-fields.ts)", () => {
  const documented = new Set<string>(LOG_FIELDS);
  const seen = lines.filter((l) => MAIL_MESSAGES.includes(l.msg));
  expect(new Set(seen.map((l) => l.msg))).toEqual(new Set(MAIL_MESSAGES));
  expect([...new Set(seen.flatMap((l) => Object.keys(l)))].filter((k) => !documented.has(k))).toEqual([]);
});
