// The hosted service's other target formats, and rfc822 (docs/receiving.md), read by what
// reads them in the wild: `multipart` by Griddler's adapter behind Rack's multipart parser,
// `rfc822` by a relay ingress in the way of Rails Action Mailbox's (Basic credentials in the
// target URL, the message as the body), `raw` and `json` by the Fetch API's parsers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { readWithGriddler } from "../helpers/griddler.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { requireTools } from "../helpers/tools.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const auth = bearer(ACCOUNT_A.token);
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a6a30000000049454e44ae426082",
  "hex",
);
const rackTest = requireTools("ruby-rack");

let t: TestApp;
let target: TestTarget;
const addresses: Record<string, { id: string; email: string }> = {};

/** One message as it goes over SMTP: 8-bit UTF-8 text, trailing spaces, an attachment. */
function message(to: string[]): Buffer {
  return Buffer.from(
    [
      'From: "Jörg Müller" <joerg@sender.test>',
      `To: ${to.join(", ")}`,
      "Cc: anna@example.org",
      "Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=",
      "Date: Sun, 22 Nov 2026 11:00:00 +0000",
      "Message-ID: <formats-1@sender.test>",
      "X-Trace: first",
      "X-Trace: second",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="b1"',
      "",
      "--b1",
      "Content-Type: text/plain; charset=utf-8",
      "Content-Transfer-Encoding: 8bit",
      "",
      "Grüße aus Köln   ",
      "zweite Zeile",
      "--b1",
      "Content-Type: image/png",
      'Content-Disposition: attachment; filename="logo.png"',
      "Content-Transfer-Encoding: base64",
      "",
      PNG.toString("base64"),
      "--b1--",
      "",
    ].join("\r\n"),
  );
}

let sent: Buffer;

beforeAll(async () => {
  target = TestTarget.start();
  target.answers.set("/rails/action_mailbox/relay/inbound_emails", { status: 204 });
  t = await startTestApp({ inbound: true });
  const create = async (name: string, format: string, url: string) => {
    const res = await t.json("POST", `${A}/addresses`, { auth, body: { target: url, target_format: format } });
    expect(res.status).toBe(201);
    expect(res.body.target_format).toBe(format);
    addresses[name] = res.body;
  };
  await create("json", "json", target.url("/json"));
  await create("multipart", "multipart", target.url("/multipart"));
  await create("raw", "raw", target.url("/raw"));
  await create("rfc822", "rfc822", target.url("/rails/action_mailbox/relay/inbound_emails", "actionmailbox:ingress%20secret"));
  const to = Object.values(addresses).map((a) => a.email);
  sent = message(to);
  const result = await sendWithNodemailer(t.app.inboundPort!, { raw: sent }, { envelope: { from: "joerg@sender.test", to } });
  expect(result.response).toBe("250 2.0.0 Accepted");
});
afterAll(async () => {
  await t.stop();
  await target.stop();
});

describe("rfc822 (beyond): the message itself", () => {
  test("a relay ingress gets the exact bytes sent, as message/rfc822, with the Basic credentials of its URL", () => {
    const [post] = target.at("/rails/action_mailbox/relay/inbound_emails");
    expect(post!.headers["content-type"]).toBe("message/rfc822");
    expect(post!.headers.authorization).toBe(`Basic ${Buffer.from("actionmailbox:ingress secret").toString("base64")}`);
    expect(Buffer.from(post!.raw).equals(sent)).toBe(true);
  });
});

describe("raw: the message in `message`, and the envelope", () => {
  test("`message` is the message as sent; the envelope fields are those of multipart+n", async () => {
    const form = await TestTarget.formData(target.at("/raw")[0]!);
    expect(Buffer.from(form.get("message") as string, "utf8").equals(sent)).toBe(true);
    expect([...form.keys()][0]).toBe("message");
    expect(form.get("envelope[to]")).toBe(addresses.raw!.email);
    expect(form.get("envelope[from]")).toBe("joerg@sender.test");
    expect(form.getAll("envelope[recipients][0]")).toEqual([Object.values(addresses)[0]!.email]);
    expect(form.get("envelope[md5]")).toBe(createHash("md5").update(sent).digest("hex"));
    expect(form.get("plain")).toBeNull();
  });
});

describe("json: headers under the names the message writes", () => {
  test("From, Subject, X-Trace as written, decoded; the rest as in json+n", () => {
    const body = target.at("/json")[0]!.json;
    expect(body.headers.From).toBe('"Jörg Müller" <joerg@sender.test>');
    expect(body.headers.Subject).toBe("Grüße");
    expect(body.headers["X-Trace"]).toEqual(["first", "second"]);
    expect(body.headers["Message-ID"]).toBe("<formats-1@sender.test>");
    // Postroom's own trace lines come first, under their usual names.
    expect(Object.keys(body.headers).slice(0, 2)).toEqual(["Return-Path", "Received"]);
    expect(body.headers.subject).toBeUndefined();
    expect(body.plain).toBe("Grüße aus Köln   \nzweite Zeile");
    expect(body.envelope.to).toBe(addresses.json!.email);
    expect(body.attachments).toEqual([
      {
        file_name: "logo.png",
        content_type: "image/png",
        size: String(PNG.length),
        disposition: "attachment",
        content_id: null,
        content: PNG.toString("base64"),
      },
    ]);
  });
});

describe("multipart: what Griddler's adapter reads, through Rack's multipart parser", () => {
  rackTest("From, To, Cc, Subject, Date, the text and the attachment (attachments[0])", async () => {
    const post = target.at("/multipart")[0]!;
    const email = await readWithGriddler(post.raw, post.contentType);
    expect(email).toEqual({
      // Header names as written: the adapter's "legacy" reading (headers[From]).
      legacy: true,
      to: Object.values(addresses).map((a) => a.email),
      cc: ["anna@example.org"],
      from: '"Jörg Müller" <joerg@sender.test>',
      subject: "Grüße",
      date: "2026-11-22T11:00:00+00:00",
      text: "Grüße aus Köln   \r\nzweite Zeile",
      html: null,
      attachments: [{ filename: "logo.png", type: "image/png", bytes: PNG.toString("hex") }],
    });
  });
});

describe("multipart with a large attachment (the streamed body)", () => {
  rackTest("Griddler reads attachments[0] and attachments[1], byte for byte; the envelope recipient not in To is its Bcc", async () => {
    const big = Buffer.alloc(300 * 1024, 0xa5);
    const result = await sendWithNodemailer(t.app.inboundPort!, {
      from: "joerg@sender.test",
      to: "someone@example.org",
      bcc: addresses.multipart!.email,
      subject: "large",
      text: "big file",
      attachments: [
        { filename: "big.bin", content: big, contentType: "application/octet-stream" },
        { filename: "logo.png", content: PNG, contentType: "image/png" },
      ],
    });
    expect(result.code).toBe(250);
    const post = target.at("/multipart")[1]!;
    const email = await readWithGriddler(post.raw, post.contentType);
    expect(email.attachments).toEqual([
      { filename: "big.bin", type: "application/octet-stream", bytes: big.toString("hex") },
      { filename: "logo.png", type: "image/png", bytes: PNG.toString("hex") },
    ]);
    expect({ to: email.to, bcc: email.bcc }).toEqual({ to: ["someone@example.org"], bcc: [addresses.multipart!.email] });
  });
});
