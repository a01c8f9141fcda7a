// What a target receives for real mail, field by field, in both formats, sent by
// nodemailer and by swaks over real SMTP (docs/receiving.md).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import MailComposer from "nodemailer/lib/mail-composer";
import { ManualClock } from "../../src/lib/clock.ts";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { requireTools } from "../helpers/tools.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a6a30000000049454e44ae426082",
  "hex",
);

let t: TestApp;
let target: TestTarget;
let dns: TestDnsServer;
const clock = new ManualClock(Date.parse("2026-11-22T12:00:00Z"));

async function address(path: string, format: "json+n" | "multipart+n", extra: Record<string, unknown> = {}, credentials = "") {
  const res = await t.json("POST", `${A}/addresses`, {
    auth,
    body: { target: target.url(path, credentials), target_format: format, ...extra },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; email: string };
}

/** The message as it goes over SMTP: nodemailer's composer output with every line ending CRLF. */
function compose(mail: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    new MailComposer(mail)
      .compile()
      .build((err, msg) => (err ? reject(err) : resolve(Buffer.from(msg.toString("latin1").replace(/\r?\n/g, "\r\n"), "latin1")))),
  );
}

beforeAll(async () => {
  dns = await TestDnsServer.start();
  dns.set("sender.test", [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
  target = TestTarget.start();
  // One parse worker, so the worker-thread path is the one under test here.
  t = await startTestApp({ inbound: true, dnsServer: dns.address, clock, inboundKeys: "parse_workers = 1" });
});
afterAll(async () => {
  await t.stop();
  await target.stop();
  await dns.stop();
});

describe("json+n and multipart+n, one message to two addresses", () => {
  let json: { id: string; email: string };
  let multi: { id: string; email: string };
  let raw: Buffer;

  beforeAll(async () => {
    json = await address("/json", "json+n", {}, "hook%40user:s3cret");
    multi = await address("/multi", "multipart+n");
    raw = await compose({
      from: '"Jörg Müller" <joerg@sender.test>',
      to: [`${json.id}+invoices@in.postroom.test`, multi.email],
      subject: "Grüße aus Köln ✓",
      messageId: "<payload-test-1@sender.test>",
      date: new Date("2026-11-22T11:00:00Z"),
      headers: { "X-Trace": ["first", "second"] },
      text: "Thanks, that works!\n\nJörg\n\nOn Sun, Nov 22, 2026 Anna <anna@example.org> wrote:\n> Does it work?\n",
      html: '<p>Thanks, that works! <img src="cid:logo@sender.test"></p>',
      attachments: [
        { filename: "logo.png", content: PNG, contentType: "image/png", cid: "logo@sender.test" },
        { filename: "Rechnung März.pdf", content: Buffer.from("%PDF-1.4 fake"), contentType: "application/pdf" },
      ],
    });
    const result = await sendWithNodemailer(
      t.app.inboundPort!,
      { raw },
      { envelope: { from: "joerg@sender.test", to: [`${json.id}+invoices@in.postroom.test`, multi.email] } },
    );
    expect(result.response).toBe("250 2.0.0 Accepted");
  });

  test("json+n: the envelope", () => {
    const [post] = target.at("/json");
    expect(post!.json.envelope).toEqual({
      to: `${json.id}+invoices@in.postroom.test`,
      // Both addresses are account A's: each POST lists both recipients.
      recipients: [`${json.id}+invoices@in.postroom.test`, multi.email],
      from: "joerg@sender.test",
      helo_domain: "client.example.org",
      remote_ip: "127.0.0.1",
      spf: { result: "pass", domain: "sender.test" },
      tls: false,
      tls_cipher: null,
      md5: createHash("md5").update(raw).digest("hex"),
      dkim: { result: "none", signatures: [] },
      dmarc: expect.objectContaining({ result: expect.any(String) }),
    });
  });

  test("json+n: headers lower snake case, decoded, repeated ones as arrays in order", () => {
    const { headers } = target.at("/json")[0]!.json;
    expect(headers.from).toBe("Jörg Müller <joerg@sender.test>");
    expect(headers.subject).toBe("Grüße aus Köln ✓");
    expect(headers.message_id).toBe("<payload-test-1@sender.test>");
    expect(headers.date).toBe("Sun, 22 Nov 2026 11:00:00 +0000");
    expect(headers.mime_version).toBe("1.0");
    expect(headers.x_trace).toEqual(["first", "second"]);
    expect(headers.content_type).toStartWith("multipart/mixed;");
  });

  test("json+n: bodies, the reply without quoted history, attachments and inline images", () => {
    const body = target.at("/json")[0]!.json;
    expect(body.plain).toBe("Thanks, that works!\n\nJörg\n\nOn Sun, Nov 22, 2026 Anna <anna@example.org> wrote:\n> Does it work?\n");
    expect(body.html).toBe('<p>Thanks, that works! <img src="cid:logo@sender.test"></p>');
    expect(body.reply_plain).toBe("Thanks, that works!\n\nJörg");
    expect(body.attachments).toEqual([
      {
        file_name: "logo.png",
        content_type: "image/png",
        size: String(PNG.length),
        disposition: "inline",
        content_id: "<logo@sender.test>",
        content: PNG.toString("base64"),
      },
      {
        file_name: "Rechnung März.pdf",
        content_type: "application/pdf",
        size: "13",
        disposition: "attachment",
        content_id: null,
        content: Buffer.from("%PDF-1.4 fake").toString("base64"),
      },
    ]);
  });

  test("the target's credentials arrive as Basic auth, with a stable message ID header", () => {
    const [post] = target.at("/json");
    expect(post!.headers.authorization).toBe("Basic " + Buffer.from("hook@user:s3cret").toString("base64"));
    expect(post!.headers["content-type"]).toBe("application/json");
    expect(post!.headers["x-postroom-message-id"]).toMatch(/^[0-9a-f]{32}$/);
    expect(post!.headers["user-agent"]).toStartWith("Postroom/");
    expect(target.at("/multi")[0]!.headers["x-postroom-message-id"]).not.toBe(post!.headers["x-postroom-message-id"]);
  });

  test("multipart+n, parsed by the Fetch API's multipart parser: the same content as form fields", async () => {
    const form = await TestTarget.formData(target.at("/multi")[0]!);
    const field = (name: string) => form.get(name);
    expect(field("envelope[to]")).toBe(multi.email);
    expect(field("envelope[recipients][0]")).toBe(`${json.id}+invoices@in.postroom.test`);
    expect(field("envelope[recipients][1]")).toBe(multi.email);
    expect(field("envelope[from]")).toBe("joerg@sender.test");
    expect(field("envelope[helo_domain]")).toBe("client.example.org");
    expect(field("envelope[remote_ip]")).toBe("127.0.0.1");
    expect(field("envelope[spf][result]")).toBe("pass");
    expect(field("envelope[spf][domain]")).toBe("sender.test");
    expect(field("envelope[tls]")).toBe("false");
    expect(field("envelope[md5]")).toBe(createHash("md5").update(raw).digest("hex"));
    expect(field("headers[subject]")).toBe("Grüße aus Köln ✓");
    expect(field("headers[x_trace][0]")).toBe("first");
    expect(field("headers[x_trace][1]")).toBe("second");
    expect(String(field("plain")).replace(/\r\n/g, "\n")).toStartWith("Thanks, that works!\n\nJörg");
    expect(field("reply_plain")).toBe("Thanks, that works!\r\n\r\nJörg");
    expect(field("html")).toBe('<p>Thanks, that works! <img src="cid:logo@sender.test"></p>');
    const files = form.getAll("attachments[]") as File[];
    expect(files.map((f) => [f.name, f.type.split(";")[0], f.size])).toEqual([
      ["logo.png", "image/png", PNG.length],
      ["Rechnung März.pdf", "application/pdf", 13],
    ]);
    expect(Buffer.from(await files[0]!.arrayBuffer())).toEqual(PNG);
  });

  test("the same message again carries the same X-Postroom-Message-Id (targets drop duplicates)", async () => {
    const before = target.at("/json").length;
    await sendWithNodemailer(t.app.inboundPort!, { raw }, { envelope: { from: "joerg@sender.test", to: [json.email] } });
    const posts = target.at("/json");
    expect(posts).toHaveLength(before + 1);
    expect(posts.at(-1)!.headers["x-postroom-message-id"]).toBe(posts[0]!.headers["x-postroom-message-id"]);
  });
});

describe('attachments kept on the appliance ({"store": "local"})', () => {
  test("the payload carries signed URLs that serve the file until they expire; altered ones are 404", async () => {
    const stored = await address("/stored", "json+n", { attachments: { store: "local" } });
    const result = await sendWithNodemailer(t.app.inboundPort!, {
      from: "joerg@sender.test",
      to: stored.email,
      subject: "with a file",
      text: "see attached",
      attachments: [{ filename: "report 1.csv", content: "a,b\n1,2\n", contentType: "text/csv" }],
    });
    expect(result.code).toBe(250);
    const [att] = target.at("/stored")[0]!.json.attachments;
    expect(att).toEqual({
      file_name: "report 1.csv",
      content_type: "text/csv",
      size: "8",
      disposition: "attachment",
      content_id: null,
      url: expect.any(String),
    });
    expect(att.content).toBeUndefined();
    const url = new URL(att.url);
    expect(url.origin).toBe("http://127.0.0.1:8080");
    const path = url.pathname + url.search;

    const got = await t.call("GET", path);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe("a,b\n1,2\n");
    expect(got.headers.get("content-type")).toStartWith("text/csv");

    const forged = path.replace(/signature=([0-9a-f])/, (_m, c: string) => `signature=${c === "0" ? "1" : "0"}`);
    expect((await t.call("GET", forged)).status).toBe(404);
    const longer = path.replace(/expires=(\d+)/, (_m, s: string) => `expires=${Number(s) + 86_400}`);
    expect((await t.call("GET", longer)).status).toBe(404);

    clock.advance(8 * 86_400_000);
    expect((await t.call("GET", path)).status).toBe(404);
  });
});

describe("raw UTF-8 headers (SMTPUTF8)", () => {
  test("reach the target as text in both formats, not as bytes read one by one", async () => {
    const json = await address("/utf8-json", "json+n");
    const multi = await address("/utf8-multi", "multipart+n");
    const raw = Buffer.from(
      `From: Jörg Müller <joerg@sender.test>\r\nTo: ${json.email}, ${multi.email}\r\nSubject: Grüße aus Köln ✓\r\nMessage-ID: <utf8-headers@sender.test>\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nHallo\r\n`,
      "utf8",
    );
    const result = await sendWithNodemailer(
      t.app.inboundPort!,
      { raw },
      { envelope: { from: "joerg@sender.test", to: [json.email, multi.email] } },
    );
    expect(result.response).toBe("250 2.0.0 Accepted");
    const body = target.at("/utf8-json")[0]!.json;
    expect(body.headers).toMatchObject({ from: "Jörg Müller <joerg@sender.test>", subject: "Grüße aus Köln ✓" });
    const form = await TestTarget.formData(target.at("/utf8-multi")[0]!);
    expect(form.get("headers[subject]")).toBe("Grüße aus Köln ✓");
    expect(form.get("headers[from]")).toBe("Jörg Müller <joerg@sender.test>");
  });
});

describe("swaks as the client", () => {
  requireTools("swaks")("swaks sends, the target receives it", async () => {
    const addr = await address("/swaks", "json+n");
    const file = `/tmp/postroom-swaks-${process.pid}.txt`;
    await Bun.write(file, "attached by swaks\n");
    const run = Bun.spawn(
      [
        "swaks",
        "--server",
        "127.0.0.1",
        "--port",
        String(t.app.inboundPort),
        "--helo",
        "swaks.sender.test",
        "--from",
        "bob@sender.test",
        "--to",
        addr.email,
        "--header",
        "Subject: Hello from swaks",
        "--body",
        "Body from swaks",
        "--attach",
        `@${file}`,
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    const transcript = (await new Response(run.stdout).text()) + (await new Response(run.stderr).text());
    expect(await run.exited).toBe(0);
    expect(transcript).toContain("<-  250 2.0.0 Accepted");
    const body = target.at("/swaks")[0]!.json;
    expect(body.envelope).toMatchObject({
      from: "bob@sender.test",
      helo_domain: "swaks.sender.test",
      spf: { result: "pass", domain: "sender.test" },
    });
    expect(body.headers.subject).toBe("Hello from swaks");
    expect(body.plain.trim()).toBe("Body from swaks");
    expect(body.attachments).toHaveLength(1);
    expect(Buffer.from(body.attachments[0].content, "base64").toString()).toBe("attached by swaks\n");
  });
});

describe("(beyond) signed POSTs", () => {
  test("an address with signed: true gets its secret once; every POST verifies with the standardwebhooks library", async () => {
    // Receivers check the signature's timestamp against their own clock.
    clock.set(Date.now());
    const created = await t.json("POST", `${A}/addresses`, {
      auth,
      body: { target: target.url("/signed"), target_format: "json+n", signed: true },
    });
    expect(created.body.signed).toBe(true);
    expect(created.body.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    const read = await t.json("GET", `${A}/addresses/${created.body.id}`, { auth });
    expect(read.body.signed).toBe(true);
    expect(read.body.signing_secret).toBeUndefined();

    // A PUT that does not mention signing keeps it (and does not show the secret again).
    const put = await t.json("PUT", `${A}/addresses/${created.body.id}`, {
      auth,
      body: { target: target.url("/signed"), target_format: "json+n" },
    });
    expect(put.body).toMatchObject({ signed: true });
    expect(put.body.signing_secret).toBeUndefined();

    expect(
      (await sendWithNodemailer(t.app.inboundPort!, { from: "joerg@sender.test", to: created.body.email, subject: "signed", text: "x" }))
        .code,
    ).toBe(250);
    const [post] = target.at("/signed");
    const { Webhook } = await import("standardwebhooks");
    const verified = new Webhook(created.body.signing_secret).verify(Buffer.from(post!.raw), post!.headers);
    expect(verified).toBeDefined();
    expect(post!.headers["webhook-id"]).toBe(post!.headers["x-postroom-message-id"]);
    expect(() => new Webhook(created.body.signing_secret).verify(Buffer.from(post!.raw).toString() + " ", post!.headers)).toThrow();

    const off = await t.json("PATCH", `${A}/addresses/${created.body.id}`, { auth, body: { signed: false } });
    expect(off.body.signed).toBe(false);
    await sendWithNodemailer(t.app.inboundPort!, { from: "joerg@sender.test", to: created.body.email, subject: "unsigned", text: "x" });
    expect(target.at("/signed")[1]!.headers["webhook-signature"]).toBeUndefined();
  });
});

describe('attachments uploaded to S3 ({"store": "s3"}), against s3rver as the S3 server', () => {
  test("the payload carries presigned URLs under path_prefix that serve the file", async () => {
    clock.set(Date.now());
    const { default: S3rver } = await import("s3rver");
    const dir = `/tmp/postroom-s3rver-${process.pid}`;
    const s3 = new S3rver({
      port: 0,
      address: "127.0.0.1",
      silent: true,
      directory: dir,
      configureBuckets: [{ name: "mail-files", configs: [] }],
    });
    const { port } = await s3.run();
    try {
      const addr = await address("/s3", "json+n", {
        attachments: {
          store: "s3",
          bucket: "mail-files",
          region: "us-east-1",
          endpoint: `http://127.0.0.1:${port}`,
          path_prefix: "inbound/",
          access_key_id: "S3RVER",
          secret_access_key: "S3RVER",
        },
      });
      const result = await sendWithNodemailer(t.app.inboundPort!, {
        from: "joerg@sender.test",
        to: addr.email,
        subject: "to s3",
        text: "see attached",
        attachments: [{ filename: "data.json", content: '{"a":1}', contentType: "application/json" }],
      });
      expect(result.code).toBe(250);
      const [att] = target.at("/s3")[0]!.json.attachments;
      expect(att).toMatchObject({ file_name: "data.json", content_type: "application/json", size: "7" });
      const url = new URL(att.url);
      expect(url.pathname).toMatch(/^\/mail-files\/inbound\/\d{4}\/\d{2}\/\d{2}\/[0-9a-f]{24}\/data\.json$/);
      expect(url.searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);
      const got = await fetch(att.url);
      expect(await got.text()).toBe('{"a":1}');
    } finally {
      await s3.close();
      await Bun.$`rm -rf ${dir}`.quiet();
    }
  });
});
