// tls.mode = "files": the certificate replaced on disk reaches new SMTP and HTTPS
// connections without a restart while open ones keep theirs; a bad file (unreadable, a
// key of another certificate) is logged and changes nothing; /healthz warns before
// expiry, /metrics shows when it expires, `postroom tls status` prints it all.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { hashSecret } from "../../src/auth/secrets.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { tempDir } from "../helpers/tmp.ts";

const NAME = "mx.postroom.test";
const METRICS_TOKEN = "pr_metrics_token_for_tests";
const dir = tempDir();
const certFile = join(dir.path, "live.crt");
const keyFile = join(dir.path, "live.key");
const logLines: string[] = [];
let t: TestApp;

/** Puts a new pair in place the way certbot does: written aside, renamed over. */
function replaceLiveFiles(name: string, days = 2): string {
  const made = makeSelfSignedCert(dir.path, NAME, name, days);
  renameSync(made.keyFile, keyFile);
  renameSync(made.certFile, certFile);
  return new X509Certificate(readFileSync(certFile)).serialNumber;
}

async function smtpSerial(port: number): Promise<string> {
  const { session } = await SmtpSession.open(port);
  await session.command("EHLO client.postroom.test");
  const peer = await session.startTls(NAME);
  await session.close();
  return new X509Certificate(peer.raw).serialNumber;
}

function httpsSerial(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: "127.0.0.1", port, servername: NAME, rejectUnauthorized: false }, () => {
      const serial = new X509Certificate(socket.getPeerCertificate().raw).serialNumber;
      socket.end();
      resolve(serial);
    });
    socket.once("error", reject);
  });
}

async function eventually(what: string, probe: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logLines.join("\n")}`);
    await Bun.sleep(50);
  }
}

let firstSerial: string;

beforeAll(async () => {
  firstSerial = replaceLiveFiles("first", 5);
  t = await startTestApp({
    inbound: true,
    submission: true,
    smtp: `submission_tls_listen = "127.0.0.1:0"`,
    http: `tls = true\nmetrics_token = "${hashSecret(METRICS_TOKEN)}"`,
    tls: `mode = "files"\ncert_file = "${certFile}"\nkey_file = "${keyFile}"\ncheck_interval = "100ms"`,
    logger: createLogger({ level: "info", sink: (line) => logLines.push(line) }),
  });
});

afterAll(async () => {
  await t.stop();
  dir.remove();
});

describe("tls.mode = files", () => {
  test("/healthz warns about a certificate that expires within 14 days; /metrics shows when it expires", async () => {
    const health = (await t.json("GET", "/healthz")).body;
    expect(health.status).toBe("ok");
    expect(health.warnings).toEqual([expect.stringMatching(/^tls certificate for mx\.postroom\.test expires in 4 days \(/)]);
    expect((await t.call("GET", "/metrics")).status).toBe(401);
    const metrics = await t.call("GET", "/metrics", { auth: `Bearer ${METRICS_TOKEN}` });
    expect(metrics.status).toBe(200);
    // The certificate's notAfter, read from the file by node:crypto, in seconds.
    const expiry = Date.parse(new X509Certificate(readFileSync(certFile)).validTo) / 1000;
    expect(expiry - Date.now() / 1000).toBeGreaterThan(4 * 86_400);
    expect(await metrics.text()).toContain(
      `postroom_tls_certificate_expiry_timestamp_seconds{names="mx.postroom.test",issuer="mx.postroom.test"} ${expiry}`,
    );
  });

  test("a certificate replaced on disk reaches new SMTP and HTTPS connections; an open session keeps working", async () => {
    expect(await smtpSerial(t.app.inboundPort!)).toBe(firstSerial);
    expect(await httpsSerial(t.app.httpPort!)).toBe(firstSerial);
    const { session } = await SmtpSession.open(t.app.inboundPort!);
    await session.command("EHLO client.postroom.test");
    await session.startTls(NAME);

    const secondSerial = replaceLiveFiles("second");
    await eventually("the new certificate on inbound", async () => (await smtpSerial(t.app.inboundPort!)) === secondSerial);
    expect(await smtpSerial(t.app.submissionPort!)).toBe(secondSerial);
    expect(await httpsSerial(t.app.httpPort!)).toBe(secondSerial);
    const api = await fetch(`https://127.0.0.1:${t.app.httpPort}/healthz`, { tls: { rejectUnauthorized: false } });
    expect(api.status).toBe(200);

    expect(await session.command("EHLO client.postroom.test")).toStartWith("250");
    expect(await session.command("MAIL FROM:<alice@sender.test>")).toStartWith("250");
    await session.close();
  });

  test("an unreadable key or a key of another certificate is logged; the old certificate stays in use", async () => {
    const serial = await smtpSerial(t.app.inboundPort!);
    const other = makeSelfSignedCert(dir.path, NAME, "other");
    logLines.length = 0;
    renameSync(other.keyFile, keyFile); // the key no longer matches the live certificate
    await eventually("the refusal", async () => logLines.some((l) => l.includes('"tls certificate not loaded"')));
    expect(JSON.parse(logLines.find((l) => l.includes('"tls certificate not loaded"'))!)).toMatchObject({
      level: "error",
      reason: "the key does not match the certificate",
    });
    expect(await smtpSerial(t.app.inboundPort!)).toBe(serial);

    logLines.length = 0;
    renameSync(keyFile, join(dir.path, "moved.key")); // now there is no key at all
    await eventually("the refusal", async () => logLines.some((l) => l.includes("cannot be read")));
    expect(JSON.parse(logLines.find((l) => l.includes('"tls certificate not loaded"'))!).reason).toBe(
      `tls.key_file ${keyFile} cannot be read: ENOENT`,
    );
    expect(await smtpSerial(t.app.inboundPort!)).toBe(serial);
    expect((await t.json("GET", "/healthz")).body.warnings).toContain(`tls: tls.key_file ${keyFile} cannot be read: ENOENT`);
  });
});

describe("a bad certificate at start", () => {
  test("no STARTTLS, implicit TLS waits, nothing crashes; the first good pair turns TLS on", async () => {
    const bad = tempDir();
    const lines: string[] = [];
    const crt = join(bad.path, "c.crt");
    const key = join(bad.path, "c.key");
    makeSelfSignedCert(bad.path, NAME, "c"); // c.crt, with c.key replaced by another key:
    const mismatched = makeSelfSignedCert(bad.path, NAME, "d");
    renameSync(mismatched.keyFile, key);
    const app = await startTestApp({
      inbound: true,
      smtp: `submission_tls_listen = "127.0.0.1:0"`,
      tls: `mode = "files"\ncert_file = "${crt}"\nkey_file = "${key}"\ncheck_interval = "100ms"`,
      logger: createLogger({ level: "info", sink: (l) => lines.push(l) }),
    });
    try {
      expect(JSON.parse(lines.find((l) => l.includes('"tls certificate not loaded"'))!).reason).toBe(
        `the key does not match the certificate`,
      );
      const { session } = await SmtpSession.open(app.app.inboundPort!);
      const ehlo = await session.command("EHLO client.postroom.test");
      expect(ehlo).toStartWith("250");
      expect(ehlo).not.toContain("STARTTLS");
      await session.close();
      const health = await app.json("GET", "/healthz");
      expect(health.status).toBe(503);
      expect(health.body.checks.smtp_submission_tls).toBe("waiting for a certificate");

      const made2 = makeSelfSignedCert(bad.path, NAME, "e");
      renameSync(made2.keyFile, key);
      renameSync(made2.certFile, crt);
      await eventually("implicit TLS to start", async () => app.app.submissionTlsPort !== null);
      expect(await smtpSerial(app.app.inboundPort!)).toBe(new X509Certificate(await Bun.file(crt).text()).serialNumber);
      expect((await app.json("GET", "/healthz")).status).toBe(200);
    } finally {
      await app.stop();
      bad.remove();
    }
  });
});
