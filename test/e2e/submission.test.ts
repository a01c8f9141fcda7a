// SMTP submission with real clients (nodemailer, swaks): AUTH, the queued-as reply, the
// sending headers honoured and removed, Bcc, and refusals.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import nodemailer from "nodemailer";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { runSwaks } from "../helpers/smtp.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";

let t: TestApp;
let sink: SmtpSink;
let dns: TestDnsServer;
const certs = tempDir();
const QUEUED = /^250 2\.0\.0 Thanks! Queued as: ([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})$/;

const transport = (user = ACCOUNT_A.outboundId, pass = ACCOUNT_A.smtpKey, port = t.app.submissionPort!) =>
  nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, auth: { user, pass } });

const sentMessage = async (id: string) =>
  (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${id}`, { auth: bearer(ACCOUNT_A.token) })).body;

beforeAll(async () => {
  const { certFile, keyFile } = makeSelfSignedCert(certs.path, "mx.postroom.test");
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  t = await startTestApp({
    submission: true,
    dnsServer: dns.address,
    accounts: [{ ...ACCOUNT_A }, ACCOUNT_B],
    smtp: 'submission_tls_listen = "127.0.0.1:0"',
    tls: `mode = "files"\ncert_file = "${certFile}"\nkey_file = "${keyFile}"`,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
  certs.remove();
});

describe("submission with nodemailer", () => {
  test("queued with the sent message's UUID; tags and class honoured and removed; Bcc delivered but not shown", async () => {
    const info = await transport().sendMail({
      from: "Ann <ann@sender.test>",
      to: "bob@example.org",
      cc: "carol@example.org",
      bcc: "hidden@example.org",
      subject: "via submission",
      text: "hello",
      headers: { "X-Postroom-Tags": "welcome, onboarding", "X-CloudMTA-Class": "priority" },
    });
    const id = QUEUED.exec(info.response)?.[1];
    expect(id).toBeDefined();
    await eventually(() => sink.messages.filter((m) => m.raw.includes("via submission")).length === 3, 10_000, "3 copies");
    for (const m of sink.messages.filter((x) => x.raw.includes("via submission"))) {
      expect(m.raw).not.toMatch(/^X-Postroom-Tags:/im);
      expect(m.raw).not.toMatch(/^X-CloudMTA-Class:/im);
      expect(m.raw).not.toMatch(/^Bcc:/im);
      expect(m.mailFrom).toStartWith(`bounces+${id}-`);
    }
    const m = await sentMessage(id!);
    expect(m).toMatchObject({
      id,
      from: "Ann <ann@sender.test>",
      to: ["bob@example.org"],
      cc: ["carol@example.org"],
      tags: ["welcome", "onboarding"],
      priority: "priority",
      subject: "via submission",
    });
    expect(m.recipients.map((r: any) => [r.email, r.type])).toEqual([
      ["bob@example.org", "to"],
      ["carol@example.org", "cc"],
      ["hidden@example.org", "bcc"],
    ]);
  });

  test("wrong password: 535; no AUTH: 530; a management token is not an SMTP password", async () => {
    await expect(
      transport(ACCOUNT_A.outboundId, "pr_wrong").sendMail({ from: "a@sender.test", to: "b@example.org", text: "x" }),
    ).rejects.toMatchObject({ responseCode: 535 });
    await expect(
      transport(ACCOUNT_A.id, ACCOUNT_A.token).sendMail({ from: "a@sender.test", to: "b@example.org", text: "x" }),
    ).rejects.toMatchObject({ responseCode: 535 });
    const { session } = await SmtpSession.open(t.app.submissionPort!);
    try {
      await session.command("EHLO client.example.org");
      expect(await session.command("MAIL FROM:<a@sender.test>")).toStartWith("530");
    } finally {
      await session.close();
    }
  });

  test("AUTH is refused before STARTTLS unless allow_insecure_auth", async () => {
    const strict = await startTestApp({
      dnsServer: dns.address,
      submission: true,
      allowInsecureAuth: false,
      tls: `mode = "files"\ncert_file = "${certs.path}/server.crt"\nkey_file = "${certs.path}/server.key"`,
      outbound: SENDING_KEYS,
    });
    await verifiedSendingDomain(strict, dns, ACCOUNT_A, "sender.test");
    const { session } = await SmtpSession.open(strict.app.submissionPort!);
    try {
      const ehlo = await session.command("EHLO client.example.org");
      expect(ehlo).toContain("250-STARTTLS");
      const plain = Buffer.from(`\0${ACCOUNT_A.outboundId}\0${ACCOUNT_A.smtpKey}`).toString("base64");
      expect(await session.command(`AUTH PLAIN ${plain}`)).toStartWith("538 5.7.11 Must issue a STARTTLS command first");
      // After STARTTLS the same credentials work (nodemailer upgrades first).
      const secure = nodemailer.createTransport({
        host: "127.0.0.1",
        port: strict.app.submissionPort!,
        secure: false,
        requireTLS: true,
        tls: { rejectUnauthorized: false },
        auth: { user: ACCOUNT_A.outboundId, pass: ACCOUNT_A.smtpKey },
      });
      expect(
        (await secure.sendMail({ from: "ann@sender.test", to: "starttls@example.org", subject: "after starttls", text: "x" })).response,
      ).toMatch(QUEUED);
    } finally {
      await session.close();
      await strict.stop();
    }
  });

  test("implicit TLS on submission_tls_listen", async () => {
    const tls = nodemailer.createTransport({
      host: "127.0.0.1",
      port: t.app.submissionTlsPort!,
      secure: true,
      tls: { rejectUnauthorized: false },
      auth: { user: ACCOUNT_A.outboundId, pass: ACCOUNT_A.smtpKey },
    });
    const info = await tls.sendMail({ from: "ann@sender.test", to: "tls@example.org", subject: "over 465", text: "x" });
    expect(info.response).toMatch(QUEUED);
    await eventually(() => sink.to("tls@example.org").length === 1);
  });
});

describe("submission with swaks", () => {
  requireTools("swaks")("AUTH PLAIN and LOGIN, then the queued-as reply", async () => {
    for (const method of ["PLAIN", "LOGIN"]) {
      const run = Bun.spawn(
        [
          "swaks",
          "--server",
          "127.0.0.1",
          "--port",
          String(t.app.submissionPort),
          "--auth",
          method,
          "--auth-user",
          ACCOUNT_A.outboundId,
          "--auth-password",
          ACCOUNT_A.smtpKey,
          "--from",
          "ann@sender.test",
          "--to",
          `swaks-${method.toLowerCase()}@example.org`,
          "--header",
          `Subject: swaks ${method}`,
          "--body",
          "from swaks",
        ],
        { stdout: "pipe", stderr: "pipe" },
      );
      const transcript = (await new Response(run.stdout).text()) + (await new Response(run.stderr).text());
      expect(await run.exited).toBe(0);
      expect(transcript).toContain("235 2.7.0 Authentication successful");
      expect(transcript).toMatch(/<- {2}250 2\.0\.0 Thanks! Queued as: [0-9a-f-]{36}/);
      await eventually(() => sink.to(`swaks-${method.toLowerCase()}@example.org`).length === 1);
    }
  });
});

describe("the author must be unambiguous (issue 14): refused at the end of DATA, nothing queued", () => {
  const listed = async (rcpt: string) =>
    (
      await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages?outbound_account_id=${ACCOUNT_A.outboundId}&query=to:${rcpt}`, {
        auth: bearer(ACCOUNT_A.token),
      })
    ).body;
  const rawMail = (rcpt: string, headers: string) => `${headers}\r\nTo: ${rcpt}\r\nSubject: who sends?\r\n\r\nbody\r\n`;

  test.each([
    ["two From headers", "From: ann@sender.test\r\nFrom: ceo@bank.example", "550 5.7.1 message has 2 From headers; RFC 5322 allows one"],
    [
      "one From with two addresses",
      "From: ann@sender.test, ceo@bank.example",
      "550 5.7.1 the From header names 2 addresses; name one, or add a Sender header naming the one that sends",
    ],
    ["no From at all", "Reply-To: ann@sender.test", "550 5.7.1 message has no From header; one naming the sender is required (RFC 5322)"],
    ["an empty From", "From: ", "550 5.7.1 the From header names no address"],
    ["a group as From", "From: undisclosed-recipients:;", "550 5.7.1 the From header is a group; it must name the sender's address"],
    [
      "an address behind an address",
      "From: ann@sender.test <ceo@bank.example>",
      "550 5.7.1 the From header is malformed (text outside its addresses)",
    ],
    [
      "several From addresses and a Sender of another domain",
      "From: ann@sender.test, bob@sender.test\r\nSender: ceo@bank.example",
      "550 5.7.1 domain bank.example is not a sending domain of this account: add it with POST /api/v0.1/a000000000000001/sending_domains, then verify it",
    ],
    [
      "several From addresses, one of another domain, and a good Sender",
      "From: ann@sender.test, ceo@bank.example\r\nSender: ann@sender.test",
      "550 5.7.1 the message also names ceo@bank.example: domain bank.example is not a sending domain of this account: add it with POST /api/v0.1/a000000000000001/sending_domains, then verify it",
    ],
    // Issue 31: a Resent-From or Resent-Sender of another domain is refused like a Sender.
    [
      "a Resent-From of another domain",
      "From: ann@sender.test\r\nResent-From: mallory@evil.test",
      "550 5.7.1 the message also names mallory@evil.test: domain evil.test is not a sending domain of this account: add it with POST /api/v0.1/a000000000000001/sending_domains, then verify it",
    ],
    [
      "a Resent-Sender of another domain",
      "From: ann@sender.test\r\nResent-Sender: Mallory <mallory@evil.test>",
      "550 5.7.1 the message also names mallory@evil.test: domain evil.test is not a sending domain of this account: add it with POST /api/v0.1/a000000000000001/sending_domains, then verify it",
    ],
  ])("nodemailer, %s", async (name, headers, response) => {
    const rcpt = `author-${name.replace(/\W+/g, "-").slice(0, 50)}@example.org`.toLowerCase();
    const sent = transport().sendMail({ envelope: { from: "ann@sender.test", to: [rcpt] }, raw: rawMail(rcpt, headers) });
    await expect(sent).rejects.toMatchObject({ responseCode: 550, response });
    expect(await listed(rcpt)).toEqual([]);
  });

  // Issue 31: names are judged after unquoting and decoding (RFC 2231, quotes).
  test.each([
    [
      "RFC 2231 filename*=",
      "Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename*=UTF-8''evil%2Eexe",
      '554 5.7.1 an attachment is named "evil.exe": files ending in .exe are not allowed',
    ],
    [
      "a quote after .exe",
      'Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=evil.exe"',
      '554 5.7.1 an attachment is named "evil.exe": files ending in .exe are not allowed',
    ],
  ])("nodemailer, an attachment named with %s: 554 5.7.1, nothing queued", async (name, partHeaders, response) => {
    const rcpt = `attach-${name.replace(/\W+/g, "-")}@example.org`.toLowerCase();
    const raw = `From: ann@sender.test\r\nTo: ${rcpt}\r\nSubject: attachment\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b1"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b1\r\n${partHeaders}\r\nContent-Transfer-Encoding: base64\r\n\r\nTVqQAAMAAAAEAAAA\r\n--b1--\r\n`;
    await expect(transport().sendMail({ envelope: { from: "ann@sender.test", to: [rcpt] }, raw })).rejects.toMatchObject({
      responseCode: 554,
      response,
    });
    expect(await listed(rcpt)).toEqual([]);
  });

  requireTools("swaks")("swaks: two From headers, two addresses in one, and none, each 550 5.7.1 with the reason", async () => {
    const base = [
      "--server",
      "127.0.0.1",
      "--port",
      String(t.app.submissionPort),
      "--auth",
      "PLAIN",
      "--auth-user",
      ACCOUNT_A.outboundId,
      "--auth-password",
      ACCOUNT_A.smtpKey,
      "--from",
      "ann@sender.test",
    ];
    const cases: [string, string[], string][] = [
      [
        "swaks-two-from@example.org",
        ["--header", "From: ann@sender.test", "--add-header", "From: ceo@bank.example"],
        "550 5.7.1 message has 2 From headers; RFC 5322 allows one",
      ],
      [
        "swaks-two-in-one@example.org",
        ["--header", "From: Ann <ann@sender.test>, CEO <ceo@bank.example>"],
        "550 5.7.1 the From header names 2 addresses; name one, or add a Sender header naming the one that sends",
      ],
      [
        "swaks-no-from@example.org",
        ["--data", "To: swaks-no-from@example.org\\nSubject: no from\\n\\nbody\\n"],
        "550 5.7.1 message has no From header; one naming the sender is required (RFC 5322)",
      ],
    ];
    for (const [rcpt, args, response] of cases) {
      const { code, transcript } = await runSwaks([...base, "--to", rcpt, ...args]);
      expect(code).not.toBe(0);
      expect(transcript).toContain(`<** ${response}`);
      expect(await listed(rcpt)).toEqual([]);
    }
  });

  test("several From addresses with a Sender of a verified domain: the Sender's domain signs and is the sent message's from", async () => {
    await verifiedSendingDomain(t, dns, ACCOUNT_A, "second.test");
    const rcpt = "with-sender@example.org";
    const info = await transport().sendMail({
      envelope: { from: "bob@second.test", to: [rcpt] },
      raw: rawMail(rcpt, "From: Ann <ann@sender.test>, Bob <bob@second.test>\r\nSender: Bob <bob@second.test>"),
    });
    const id = QUEUED.exec(info.response)?.[1];
    expect(id).toBeDefined();
    const [got] = await eventually(() => (sink.to(rcpt).length === 1 ? sink.to(rcpt) : null), 10_000, "the copy");
    expect(got!.raw).toMatch(/^DKIM-Signature:[\s\S]*?\bd=second\.test;/);
    expect(got!.mailFrom).toStartWith(`bounces+${id}-`);
    expect(got!.mailFrom).toEndWith("@mta.second.test");
    expect(got!.raw).toContain("From: Ann <ann@sender.test>, Bob <bob@second.test>\r\n");
    expect((await sentMessage(id!)).from).toBe("Bob <bob@second.test>");
  });

  test("an encoded display name holding a comma and an address is one mailbox: the one in angle brackets", async () => {
    const rcpt = "encoded-name@example.org";
    const info = await transport().sendMail({
      envelope: { from: "ann@sender.test", to: [rcpt] },
      raw: rawMail(rcpt, "From: =?utf-8?Q?Smith=2C_John_=3Cceo=40bank.example=3E?= <ann@sender.test>"),
    });
    const id = QUEUED.exec(info.response)?.[1];
    expect((await sentMessage(id!)).from).toBe('"Smith, John <ceo@bank.example>" <ann@sender.test>');
    const [got] = await eventually(() => (sink.to(rcpt).length === 1 ? sink.to(rcpt) : null), 10_000, "the copy");
    expect(got!.raw).toMatch(/^DKIM-Signature:[\s\S]*?\bd=sender\.test;/);
  });
});
