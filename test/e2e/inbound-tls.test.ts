// STARTTLS on the inbound listener with tls.mode = "files": the session is encrypted,
// the payload and the incoming status say so.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { SmtpSession } from "../helpers/smtp-session.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";
import nodemailer from "nodemailer";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const certDir = tempDir();
let t: TestApp;
let target: TestTarget;

beforeAll(async () => {
  const { certFile, keyFile } = makeSelfSignedCert(certDir.path, "mx.postroom.test");
  target = TestTarget.start();
  t = await startTestApp({ inbound: true, tls: `mode = "files"\ncert_file = "${certFile}"\nkey_file = "${keyFile}"` });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
  certDir.remove();
});

describe("inbound STARTTLS", () => {
  test("EHLO offers STARTTLS when a certificate is configured", async () => {
    const { session } = await SmtpSession.open(t.app.inboundPort!);
    try {
      expect(await session.command("EHLO client.example.org")).toContain("250-STARTTLS");
    } finally {
      await session.close();
    }
  });

  test("mail over TLS: the payload says tls true with the protocol in tls_cipher (as the hosted service), the status records the protocol", async () => {
    const addr = (await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url("/tls"), target_format: "json+n" } })).body;
    const transport = nodemailer.createTransport({
      host: "127.0.0.1",
      port: t.app.inboundPort!,
      secure: false,
      requireTLS: true,
      tls: { rejectUnauthorized: false, servername: "mx.postroom.test" },
    });
    const info = await transport.sendMail({ from: "alice@sender.test", to: addr.email, subject: "encrypted", text: "secret" });
    transport.close();
    expect(info.response).toBe("250 2.0.0 Accepted");
    const { envelope } = target.at("/tls")[0]!.json;
    expect(envelope.tls).toBe(true);
    expect(envelope.tls_cipher).toMatch(/^TLSv1\.[23]$/);
    const [status] = (await t.json("GET", `${A}/incoming_statuses?address_id=${addr.id}`, { auth })).body;
    expect(status.tls).toMatch(/^TLSv1\.[23]$/);
  });

  test("mail over STARTTLS: our Received line says ESMTPS, with the protocol and cipher", async () => {
    const addr = (await t.json("POST", `${A}/addresses`, { auth, body: { target: target.url("/tls-received"), target_format: "json+n" } }))
      .body;
    const transport = nodemailer.createTransport({
      host: "127.0.0.1",
      port: t.app.inboundPort!,
      secure: false,
      requireTLS: true,
      name: "client.example.org",
      tls: { rejectUnauthorized: false, servername: "mx.postroom.test" },
    });
    await transport.sendMail({ from: "alice@sender.test", to: addr.email, subject: "encrypted", text: "secret" });
    transport.close();
    const { headers, envelope } = target.at("/tls-received")[0]!.json;
    expect(headers.received).toMatch(
      /^from client\.example\.org \(\[127\.0\.0\.1\]\)\t\(using TLSv1\.[23] with cipher [A-Z0-9_-]+\)\tby mx\.postroom\.test \(Postroom\) with ESMTPS id [0-9a-f]{16}\tfor </,
    );
    expect(headers.received).toContain(`(using ${envelope.tls_cipher} with cipher `);
  });
});
