// SMTP submission with real clients (nodemailer, swaks): AUTH, the queued-as reply, the
// sending headers honoured and removed, Bcc, and refusals.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import nodemailer from "nodemailer";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink } from "../helpers/sink.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { swaksAvailable } from "../helpers/smtp.ts";
import { tempDir } from "../helpers/tmp.ts";

let t: TestApp;
let sink: SmtpSink;
let dns: TestDnsServer;
const certs = tempDir();
const QUEUED = /^250 2\.0\.0 Thanks! Queued as: ([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})$/;

const transport = (user = ACCOUNT_A.outboundId, pass = ACCOUNT_A.smtpKey, port = t.app.submissionPort!) =>
  nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, auth: { user, pass } });

const sentMessage = async (id: string) => (await t.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${id}`, { auth: bearer(ACCOUNT_A.token) })).body;

beforeAll(async () => {
  const { certFile, keyFile } = makeSelfSignedCert(certs.path, "mx.postroom.test");
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  dns.set("example.org", [{ type: "MX", exchange: "mx.sink.test", priority: 10 }]);
  dns.set("mx.sink.test", [{ type: "A", address: "127.0.0.1" }]);
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
    expect(m).toMatchObject({ id, from: "Ann <ann@sender.test>", to: ["bob@example.org"], cc: ["carol@example.org"], tags: ["welcome", "onboarding"], priority: "priority", subject: "via submission" });
    expect(m.recipients.map((r: any) => [r.email, r.type])).toEqual([
      ["bob@example.org", "to"],
      ["carol@example.org", "cc"],
      ["hidden@example.org", "bcc"],
    ]);
  });

  test("wrong password: 535; no AUTH: 530; a management token is not an SMTP password", async () => {
    await expect(transport(ACCOUNT_A.outboundId, "pr_wrong").sendMail({ from: "a@sender.test", to: "b@example.org", text: "x" })).rejects.toMatchObject({ responseCode: 535 });
    await expect(transport(ACCOUNT_A.id, ACCOUNT_A.token).sendMail({ from: "a@sender.test", to: "b@example.org", text: "x" })).rejects.toMatchObject({ responseCode: 535 });
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
      expect(await session.command(`AUTH PLAIN ${plain}`)).toStartWith("538 5.7.0");
      // After STARTTLS the same credentials work (nodemailer upgrades first).
      const secure = nodemailer.createTransport({ host: "127.0.0.1", port: strict.app.submissionPort!, secure: false, requireTLS: true, tls: { rejectUnauthorized: false }, auth: { user: ACCOUNT_A.outboundId, pass: ACCOUNT_A.smtpKey } });
      expect((await secure.sendMail({ from: "ann@sender.test", to: "starttls@example.org", subject: "after starttls", text: "x" })).response).toMatch(QUEUED);
    } finally {
      await session.close();
      await strict.stop();
    }
  });

  test("implicit TLS on submission_tls_listen", async () => {
    const tls = nodemailer.createTransport({ host: "127.0.0.1", port: t.app.submissionTlsPort!, secure: true, tls: { rejectUnauthorized: false }, auth: { user: ACCOUNT_A.outboundId, pass: ACCOUNT_A.smtpKey } });
    const info = await tls.sendMail({ from: "ann@sender.test", to: "tls@example.org", subject: "over 465", text: "x" });
    expect(info.response).toMatch(QUEUED);
    await eventually(() => sink.to("tls@example.org").length === 1);
  });
});

describe("submission with swaks", () => {
  test("AUTH PLAIN and LOGIN, then the queued-as reply", async () => {
    if (!swaksAvailable()) return;
    for (const method of ["PLAIN", "LOGIN"]) {
      const run = Bun.spawn(
        ["swaks", "--server", "127.0.0.1", "--port", String(t.app.submissionPort), "--auth", method, "--auth-user", ACCOUNT_A.outboundId, "--auth-password", ACCOUNT_A.smtpKey,
          "--from", "ann@sender.test", "--to", `swaks-${method.toLowerCase()}@example.org`, "--header", `Subject: swaks ${method}`, "--body", "from swaks"],
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
