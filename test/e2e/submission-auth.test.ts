// SMTP AUTH on submission as a new user meets it (issue 31): without TLS no AUTH is
// offered, so a client such as swaks never sends its password in clear; a failed AUTH is
// logged with the username and the client's address, never the password; repeated failures
// from one address are slowed down, then the connection is closed, while another address
// is not slowed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/lib/logger.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SENDING_KEYS } from "../helpers/sending-domain.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { runSwaks } from "../helpers/smtp.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";

const WRONG_PASSWORD = "pr_wrong_password_never_logged";
const DELAY_MS = 400;
let strict: TestApp;
let noCertificate: TestApp;
let lenient: TestApp;
let dns: TestDnsServer;
const certs = tempDir();
const logLines: string[] = [];

const plain = (user: string, pass: string) => Buffer.from(`\0${user}\0${pass}`).toString("base64");

beforeAll(async () => {
  const { certFile, keyFile } = makeSelfSignedCert(certs.path, "mx.postroom.test");
  dns = await TestDnsServer.start();
  strict = await startTestApp({
    dnsServer: dns.address,
    submission: true,
    allowInsecureAuth: false,
    tls: `mode = "files"\ncert_file = "${certFile}"\nkey_file = "${keyFile}"`,
    outbound: SENDING_KEYS,
  });
  noCertificate = await startTestApp({ dnsServer: dns.address, submission: true, allowInsecureAuth: false, outbound: SENDING_KEYS });
  lenient = await startTestApp({
    dnsServer: dns.address,
    submission: true,
    logger: createLogger({ sink: (line) => void logLines.push(line) }),
    smtp: `auth_failures_before_delay = 2\nauth_failure_delay = "${DELAY_MS}ms"\nauth_failures_before_close = 4`,
    outbound: SENDING_KEYS,
  });
});
afterAll(async () => {
  await strict.stop();
  await noCertificate.stop();
  await lenient.stop();
  await dns.stop();
  certs.remove();
});

describe("no AUTH without TLS", () => {
  test("EHLO on a plain connection offers STARTTLS and no AUTH; AUTH there is 538 5.7.11 with a sentence", async () => {
    const { session } = await SmtpSession.open(strict.app.submissionPort!);
    try {
      const ehlo = await session.command("EHLO client.example.org");
      expect(ehlo).toContain("250-STARTTLS");
      expect(ehlo).not.toMatch(/^250[ -]AUTH/m);
      const reply = await session.command(`AUTH PLAIN ${plain(ACCOUNT_A.outboundId, ACCOUNT_A.smtpKey)}`);
      expect(reply).toMatch(/^538 5\.7\.11 Must issue a STARTTLS command first\b.+/);
    } finally {
      await session.close();
    }
  });

  requireTools("swaks")("swaks --auth on a plain connection stops before sending the password", async () => {
    const { code, transcript } = await runSwaks([
      "--server",
      "127.0.0.1",
      "--port",
      String(strict.app.submissionPort),
      "--auth",
      "PLAIN",
      "--auth-user",
      ACCOUNT_A.outboundId,
      "--auth-password",
      ACCOUNT_A.smtpKey,
      "--from",
      "ann@sender.test",
      "--to",
      "bob@example.org",
    ]);
    expect(code).not.toBe(0);
    expect(transcript).toMatch(/<-\s+250[ -]STARTTLS/);
    // Nothing of the credentials went over the wire: no AUTH command at all.
    expect(transcript).not.toMatch(/->\s+AUTH/);
    expect(transcript).not.toContain(plain(ACCOUNT_A.outboundId, ACCOUNT_A.smtpKey));
    expect(transcript).not.toContain(Buffer.from(ACCOUNT_A.smtpKey).toString("base64"));
  });

  requireTools("swaks")("swaks --auth on a listener without a certificate: EHLO lists no AUTH and the password never crosses", async () => {
    const { code, transcript } = await runSwaks([
      "--server",
      "127.0.0.1",
      "--port",
      String(noCertificate.app.submissionPort),
      "--auth",
      "LOGIN",
      "--auth-user",
      ACCOUNT_A.outboundId,
      "--auth-password",
      ACCOUNT_A.smtpKey,
      "--from",
      "ann@sender.test",
      "--to",
      "bob@example.org",
    ]);
    expect(code).not.toBe(0);
    expect(transcript).toMatch(/<-\s+250 SIZE/);
    expect(transcript).not.toMatch(/^<-\s+250[ -](AUTH|STARTTLS)/m);
    expect(transcript).not.toMatch(/->\s+AUTH/);
    expect(transcript).not.toContain(Buffer.from(ACCOUNT_A.smtpKey).toString("base64"));
  });

  requireTools("swaks")("after STARTTLS, AUTH is offered and swaks logs in", async () => {
    const { code, transcript } = await runSwaks([
      "--server",
      "127.0.0.1",
      "--port",
      String(strict.app.submissionPort),
      "--tls",
      "--auth",
      "PLAIN",
      "--auth-user",
      ACCOUNT_A.outboundId,
      "--auth-password",
      ACCOUNT_A.smtpKey,
      "--quit-after",
      "AUTH",
    ]);
    expect(transcript).toMatch(/<~\s+250[ -]AUTH PLAIN LOGIN/);
    expect(transcript).toContain("235 2.7.0 Authentication successful");
    expect(code).toBe(0);
  });
});

describe("failed AUTH", () => {
  test("is logged with the username and the client's address, never the password", async () => {
    const { session } = await SmtpSession.open(lenient.app.submissionPort!, { localAddress: "127.0.0.3" });
    try {
      await session.command("EHLO client.example.org");
      expect(await session.command(`AUTH PLAIN ${plain("nobody-user", WRONG_PASSWORD)}`)).toStartWith("535 5.7.8");
    } finally {
      await session.close();
    }
    const line = logLines.find((l) => l.includes("nobody-user"));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ msg: "smtp auth failed", username: "nobody-user", ip: "127.0.0.3" });
    expect(logLines.join("\n")).not.toContain(WRONG_PASSWORD);
  });

  test("from one address: slowed after auth_failures_before_delay, closed with 421 at auth_failures_before_close, then refused unchecked; another address is not slowed", async () => {
    const { session } = await SmtpSession.open(lenient.app.submissionPort!, { localAddress: "127.0.0.4" });
    const timed = async () => {
      const started = performance.now();
      const reply = await session.command(`AUTH PLAIN ${plain(ACCOUNT_A.outboundId, WRONG_PASSWORD)}`);
      return { reply, ms: performance.now() - started };
    };
    try {
      await session.command("EHLO client.example.org");
      const first = await timed();
      const second = await timed();
      expect(first.reply).toStartWith("535 5.7.8");
      expect(second.reply).toStartWith("535 5.7.8");
      expect(Math.max(first.ms, second.ms)).toBeLessThan(DELAY_MS / 2);
      const third = await timed();
      expect(third.reply).toStartWith("535 5.7.8");
      expect(third.ms).toBeGreaterThanOrEqual(DELAY_MS - 20);

      // Meanwhile another address fails without waiting.
      const other = await SmtpSession.open(lenient.app.submissionPort!, { localAddress: "127.0.0.5" });
      await other.session.command("EHLO client.example.org");
      const started = performance.now();
      expect(await other.session.command(`AUTH PLAIN ${plain(ACCOUNT_A.outboundId, WRONG_PASSWORD)}`)).toStartWith("535 5.7.8");
      expect(performance.now() - started).toBeLessThan(DELAY_MS / 2);
      // And the right password works there.
      expect(await other.session.command(`AUTH PLAIN ${plain(ACCOUNT_A.outboundId, ACCOUNT_A.smtpKey)}`)).toStartWith("235");
      await other.session.close();

      const fourth = await timed();
      expect(fourth.reply).toMatch(/^421 4\.7\.0 Too many failed logins from your address/);
      expect(await session.reply()).toBe("(connection closed)");
    } finally {
      await session.close();
    }
    // A new connection from that address is refused at once, without its password being
    // checked: the right one gets the same 421 (guessing has stopped for auth_failure_window).
    for (const password of [WRONG_PASSWORD, ACCOUNT_A.smtpKey]) {
      const again = await SmtpSession.open(lenient.app.submissionPort!, { localAddress: "127.0.0.4" });
      try {
        await again.session.command("EHLO client.example.org");
        const started = performance.now();
        expect(await again.session.command(`AUTH PLAIN ${plain(ACCOUNT_A.outboundId, password)}`)).toStartWith("421 4.7.0");
        expect(performance.now() - started).toBeLessThan(DELAY_MS / 2);
      } finally {
        await again.session.close();
      }
    }
  });
});
