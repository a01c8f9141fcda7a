// The hosted service's official Go client (cloudmailin-go, copied into test/peers/) against
// a whole Postroom: ParseIncoming reads json+n payloads with attachments, the way its README
// uses it as a target's handler, and SendMail sends through E11 with AttachmentFromFile.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { GoTarget, goConsumer, goSend, removeGoConsumer } from "../helpers/go-client.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { tempDir } from "../helpers/tmp.ts";
import { requireTools } from "../helpers/tools.ts";

const goTest = requireTools("golang-go");
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP4//8/AAX+Av6n1qajAAAAAElFTkSuQmCC", "base64");
const PDF = Buffer.from("%PDF-1.4 fake\n");

let t: TestApp;
let go: GoTarget;
let sink: SmtpSink;
let dns: TestDnsServer;
const files = tempDir();

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
  // Outside CI without Go, the tests below are skipped by name; nothing to build.
  if (Bun.which("go")) go = await GoTarget.start();
}, 60_000);
afterAll(async () => {
  await go?.stop();
  await t.stop();
  await sink.stop();
  await dns.stop();
  removeGoConsumer();
  files.remove();
});

async function jsonAddress(path: string): Promise<{ id: string; email: string }> {
  const res = await t.json("POST", `/api/v0.1/${ACCOUNT_A.id}/addresses`, {
    auth: bearer(ACCOUNT_A.token),
    body: { target: go.url(path), target_format: "json+n" },
  });
  expect(res.status).toBe(201);
  return res.body;
}

describe("ParseIncoming on json+n payloads", () => {
  goTest("attachments and an inline image: every field as posted, size and content_id as the Go client types them", async () => {
    const address = await jsonAddress("/small");
    const result = await sendWithNodemailer(t.app.inboundPort!, {
      from: "Jörg <joerg@sender.test>",
      to: address.email,
      subject: "Invoice with logo",
      text: "see attached",
      html: '<p>see <img src="cid:logo@sender.test"></p>',
      attachments: [
        { filename: "logo.png", content: PNG, contentType: "image/png", cid: "logo@sender.test" },
        { filename: "Rechnung März.pdf", content: PDF, contentType: "application/pdf" },
      ],
    });
    // The target answers 200 only when ParseIncoming succeeded (400 with its error otherwise).
    expect(result.code).toBe(250);
    await go.waitFor(1);
    const parsed = go.parsed.find((p) => p.path === "/small")!;
    expect(parsed.error).toBeUndefined();
    expect({
      subject: parsed.subject,
      from: parsed.from,
      to: parsed.envelope_to,
      tls: parsed.tls,
      tls_cipher: parsed.tls_cipher,
      plain: parsed.plain,
    }).toEqual({
      subject: "Invoice with logo",
      from: "Jörg <joerg@sender.test>",
      to: address.email,
      tls: false,
      tls_cipher: "",
      plain: "see attached",
    });
    expect(parsed.attachments).toEqual([
      {
        file_name: "logo.png",
        content_type: "image/png",
        size: PNG.length,
        content_id: "<logo@sender.test>",
        disposition: "inline",
        content_bytes: PNG.length,
        content: PNG.toString("base64"),
      },
      {
        file_name: "Rechnung März.pdf",
        content_type: "application/pdf",
        size: PDF.length,
        content_id: "",
        disposition: "attachment",
        content_bytes: PDF.length,
        content: PDF.toString("base64"),
      },
    ]);
  });

  goTest("a large attachment (the streamed body) parses too", async () => {
    const address = await jsonAddress("/large");
    const big = randomBytes(400 * 1024);
    const result = await sendWithNodemailer(t.app.inboundPort!, {
      from: "joerg@sender.test",
      to: address.email,
      subject: "large",
      text: "big file",
      attachments: [{ filename: "big.bin", content: big, contentType: "application/octet-stream" }],
    });
    expect(result.code).toBe(250);
    await go.waitFor(2);
    const parsed = go.parsed.find((p) => p.path === "/large")!;
    expect(parsed.error).toBeUndefined();
    const [a] = parsed.attachments;
    expect({ size: a!.size, bytes: a!.content_bytes, same: a!.content === big.toString("base64") }).toEqual({
      size: big.length,
      bytes: big.length,
      same: true,
    });
  });
});

describe("SendMail through E11", () => {
  goTest(
    "AttachmentFromFile: the message arrives with each file and the type the client detected or Postroom inferred",
    async () => {
      const png = join(files.path, "logo.png");
      const txt = join(files.path, "notes.txt");
      const pdf = join(files.path, "report.pdf");
      writeFileSync(png, PNG);
      writeFileSync(txt, "hello from Go\n");
      writeFileSync(pdf, PDF);
      await goConsumer();
      const sent = await goSend([png, txt, `untyped:${pdf}`], {
        smtpUrl: `smtp://${ACCOUNT_A.outboundId}:${ACCOUNT_A.smtpKey}@127.0.0.1`,
        apiBaseUrl: `http://127.0.0.1:${t.app.httpPort}/api/v0.1`,
        from: "ann@sender.test",
        to: "go@example.org",
      });
      expect(sent.error).toBeUndefined();
      expect(sent.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      await eventually(() => sink.to("go@example.org").length === 1);
      const mail = await simpleParser(sink.to("go@example.org")[0]!.raw);
      expect(mail.subject).toBe("from the Go client");
      expect(mail.attachments.map((a) => [a.filename, a.contentType, a.content.toString("base64")])).toEqual([
        // Go's http.DetectContentType: image/png, and text/plain with its charset parameter.
        ["logo.png", "image/png", PNG.toString("base64")],
        ["notes.txt", "text/plain", Buffer.from("hello from Go\n").toString("base64")],
        // Sent with content_type "": inferred from the name.
        ["report.pdf", "application/pdf", PDF.toString("base64")],
      ]);
      expect(mail.attachments[1]!.headers.get("content-type")).toMatchObject({ value: "text/plain", params: { charset: "utf-8" } });
    },
    60_000,
  );
});
