// E11's rules, as a client meets them: every refusal is 422 naming the field and the rule.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MessageClient } from "cloudmailin";
import { simpleParser } from "mailparser";
import { bearer, startTestApp, type TestApp } from "../helpers/app.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";

const SEND = `/api/v0.1/${ACCOUNT_A.outboundId}/messages`;
let t: TestApp;
let sink: SmtpSink;
let dns: TestDnsServer;

const send = (body: unknown, auth = bearer(ACCOUNT_A.smtpKey)) => t.json("POST", SEND, { auth, body });
const base = { from: "ann@sender.test", to: "bob@example.org", subject: "s", plain: "p" };
/** A raw message with one attachment part whose headers are `partHeaders`. */
const rawWithPart = (partHeaders: string) =>
  `From: ann@sender.test\r\nTo: bob@example.org\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b1"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b1\r\n${partHeaders}\r\nContent-Transfer-Encoding: base64\r\n\r\nTVqQAAMAAAAEAAAA\r\n--b1--\r\n`;

beforeAll(async () => {
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "example.org");
  dns.set("private.example", [{ type: "MX", exchange: "internal.example", priority: 10 }]);
  dns.set("internal.example", [{ type: "A", address: "10.1.2.3" }]);
  t = await startTestApp({
    dnsServer: dns.address,
    accounts: [{ ...ACCOUNT_A, extra: "markdown = true" }, ACCOUNT_B],
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true\nmax_recipients = 3\nmax_size = "64KB"`,
  });
  await verifiedSendingDomain(t, dns, ACCOUNT_A, "sender.test");
  await verifiedSendingDomain(t, dns, ACCOUNT_B, "sender.test");
});
afterAll(async () => {
  await t.stop();
  await sink.stop();
  await dns.stop();
});

describe("422 for what breaks the rules", () => {
  test.each([
    ["no body at all", { from: "ann@sender.test", to: "bob@example.org" }, "body not found: give plain, html or markdown (or raw)"],
    [
      "too many recipients",
      { ...base, to: ["a@example.org", "b@example.org"], cc: "c@example.org, d@example.org" },
      "to: at most 3 recipients (to, cc and bcc together)",
    ],
    ["no recipient", { ...base, to: [] }, "to: needs at least one recipient"],
    ["a recipient that is not an address", { ...base, to: "bob at example.org" }, 'to: "bob at example.org" is not an email address'],
    ["two senders", { ...base, from: "a@sender.test, b@sender.test" }, "from: must be one email address"],
    [
      "a line break in a header value",
      { ...base, headers: { "X-Evil": "a\r\nBcc: victim@example.org" } },
      "headers.X-Evil: must not contain line breaks",
    ],
    [
      "a header name with a colon",
      { ...base, headers: { "X-Bad:Name": "v" } },
      "headers.X-Bad:Name: is not a valid header name (printable ASCII, no colon or space)",
    ],
    [
      "a structural header",
      { ...base, headers: { From: "x@evil.test" } },
      "headers.From: is set by the message itself; use the field for it",
    ],
    [
      "a line break in the subject",
      { ...base, subject: "hi\r\nBcc: x@y.z" },
      "subject: must be one line of at most 2000 characters, without control characters",
    ],
    ["a NUL in the text body", { ...base, plain: "line one\r\nline\u0000two" }, "plain: must not contain control characters"],
    [
      "half a surrogate pair in an attachment name",
      { ...base, attachments: [{ file_name: "a\udc00.txt", content: "AAAA", content_type: "text/plain" }] },
      "attachments[0].file_name: is not well-formed Unicode (it holds half of a surrogate pair)",
    ],
    [
      "a line break in a tag",
      { ...base, tags: ["ok", "a\nb"] },
      "tags: must be a string or an array of strings, one line each, without control characters",
    ],
    [
      "a blocked file type",
      { ...base, attachments: [{ file_name: "invoice.PDF.exe", content: "AAAA", content_type: "application/octet-stream" }] },
      "attachments[0].file_name: files ending in .exe are not allowed",
    ],
    [
      "a blocked file type behind a trailing dot (Windows drops it)",
      { ...base, attachments: [{ file_name: "evil.exe.", content: "AAAA", content_type: "application/octet-stream" }] },
      "attachments[0].file_name: files ending in .exe are not allowed",
    ],
    [
      "content that is not Base64",
      { ...base, attachments: [{ file_name: "a.txt", content: "not base64!", content_type: "text/plain" }] },
      "attachments[0].content: must be Base64 without newlines",
    ],
    [
      "Base64 with newlines",
      { ...base, attachments: [{ file_name: "a.txt", content: "AAAA\nAAAA", content_type: "text/plain" }] },
      "attachments[0].content: must be Base64 without newlines",
    ],
    [
      "a bad content type",
      { ...base, attachments: [{ file_name: "a.txt", content: "AAAA", content_type: "text" }] },
      "attachments[0].content_type: must be a MIME type such as image/png",
    ],
    ["an unknown priority", { ...base, priority: "urgent" }, 'priority: must be "standard", "priority" or "digest"'],
    ["an unknown field", { ...base, bcc_list: "x@example.org" }, "bcc_list: unknown field"],
    [
      "raw with plain",
      { ...base, raw: "From: ann@sender.test\r\nTo: bob@example.org\r\n\r\nx" },
      "plain: cannot be combined with raw (put it in the raw message)",
    ],
    [
      "raw whose To does not match",
      { from: "ann@sender.test", to: "bob@example.org", raw: "From: ann@sender.test\r\nTo: eve@example.org\r\n\r\nx" },
      "to: must match the To header of raw",
    ],
    [
      "raw without From",
      { from: "ann@sender.test", to: "bob@example.org", raw: "To: bob@example.org\r\n\r\nx" },
      "raw: message has no From header; one naming the sender is required (RFC 5322)",
    ],
    [
      "raw with two From headers",
      {
        from: "ann@sender.test",
        to: "bob@example.org",
        raw: "From: ann@sender.test\r\nFrom: ann@sender.test\r\nTo: bob@example.org\r\n\r\nx",
      },
      "raw: message has 2 From headers; RFC 5322 allows one",
    ],
    [
      "raw whose From names two addresses",
      { from: "ann@sender.test", to: "bob@example.org", raw: "From: ann@sender.test, ann@sender.test\r\nTo: bob@example.org\r\n\r\nx" },
      "raw: the From header names 2 addresses; name one, or add a Sender header naming the one that sends",
    ],
    [
      "raw with a Sender of another domain",
      {
        from: "ann@sender.test",
        to: "bob@example.org",
        raw: "From: ann@sender.test\r\nSender: ceo@bank.example\r\nTo: bob@example.org\r\n\r\nx",
      },
      "raw: the message also names ceo@bank.example: domain bank.example is not a sending domain of this account: add it with POST /api/v0.1/a000000000000001/sending_domains, then verify it",
    ],
    [
      "raw whose From does not match",
      { from: "ann@sender.test", to: "bob@example.org", raw: "From: mallory@evil.test\r\nTo: bob@example.org\r\n\r\nx" },
      "from: must match the From header of raw",
    ],
    // Issue 31: Resent-From and Resent-Sender are held to the author rule too.
    [
      "raw with a Resent-From of another domain",
      {
        from: "ann@sender.test",
        to: "bob@example.org",
        raw: "From: ann@sender.test\r\nResent-From: mallory@evil.test\r\nTo: bob@example.org\r\n\r\nx",
      },
      "raw: the message also names mallory@evil.test: domain evil.test is not a sending domain of this account: add it with POST /api/v0.1/a000000000000001/sending_domains, then verify it",
    ],
    [
      "raw with a Resent-Sender of another domain",
      {
        from: "ann@sender.test",
        to: "bob@example.org",
        raw: "From: ann@sender.test\r\nResent-Sender: mallory@evil.test\r\nTo: bob@example.org\r\n\r\nx",
      },
      "raw: the message also names mallory@evil.test: domain evil.test is not a sending domain of this account: add it with POST /api/v0.1/a000000000000001/sending_domains, then verify it",
    ],
    [
      "a Resent-From in headers",
      { ...base, headers: { "Resent-From": "mallory@evil.test" } },
      "headers.Resent-From: names who sends the message; resend a message as raw, where every address it names needs a sending domain of this account",
    ],
    // Issue 31: attachment names are judged after unquoting and decoding.
    [
      "an attachment named evil.exe with a trailing quote",
      { ...base, attachments: [{ file_name: 'evil.exe"', content: "AAAA", content_type: "application/octet-stream" }] },
      "attachments[0].file_name: files ending in .exe are not allowed",
    ],
    [
      "an attachment named as RFC 2231 writes it",
      { ...base, attachments: [{ file_name: "UTF-8''evil%2Eexe", content: "AAAA", content_type: "application/octet-stream" }] },
      "attachments[0].file_name: files ending in .exe are not allowed",
    ],
    [
      "raw with an attachment named in RFC 2231 (filename*=)",
      { from: "ann@sender.test", to: "bob@example.org", raw: rawWithPart("Content-Disposition: attachment; filename*=UTF-8''evil%2Eexe") },
      'raw: an attachment is named "evil.exe": files ending in .exe are not allowed',
    ],
    [
      "raw with an attachment named evil.exe with a trailing quote",
      { from: "ann@sender.test", to: "bob@example.org", raw: rawWithPart('Content-Type: application/octet-stream; name="evil.exe\\""') },
      expect.stringMatching(/^raw: an attachment is named ".*evil\.exe.*": files ending in \.exe are not allowed$/),
    ],
    [
      "a message over max_size",
      { ...base, plain: "x".repeat(70 * 1024) },
      expect.stringMatching(/^message: is \d+ bytes; at most 65536 bytes are allowed$/),
    ],
  ])("%s", async (_name, body, error) => {
    const res = await send(body);
    expect(res.body).toEqual({ status: 422, error });
  });

  test("markdown needs the account flag", async () => {
    const res = await send({ from: "ann@sender.test", to: "bob@example.org", markdown: "# Hi" }, bearer(ACCOUNT_B.smtpKey));
    expect(res.status).toBe(403); // B's key on A's path
    const b = await t.json("POST", `/api/v0.1/${ACCOUNT_B.outboundId}/messages`, {
      auth: bearer(ACCOUNT_B.smtpKey),
      body: { from: "ann@sender.test", to: "bob@example.org", markdown: "# Hi" },
    });
    expect(b.body).toEqual({ status: 422, error: "markdown: is not enabled for this account" });
  });
});

describe("bodies and variants that are accepted", () => {
  test("markdown becomes HTML and a plain text version; html wins over markdown", async () => {
    const md = await send({
      from: "ann@sender.test",
      to: "md@example.org",
      subject: "md",
      markdown: "# Title\n\nSome **bold** text and a [link](https://example.org).",
    });
    expect(md.status).toBe(202);
    await eventually(() => sink.to("md@example.org").length === 1);
    const parsed = await simpleParser(sink.to("md@example.org")[0]!.raw);
    expect(parsed.html).toContain("<h1>Title</h1>");
    expect(parsed.html).toContain("<strong>bold</strong>");
    expect(parsed.text).toContain("TITLE");
    expect(parsed.text).toContain("Some bold text and a link [https://example.org]");

    const both = await send({
      from: "ann@sender.test",
      to: "md2@example.org",
      subject: "md",
      markdown: "# ignored",
      html: "<p>kept</p>",
      plain: "plain kept",
    });
    expect(both.status).toBe(202);
    await eventually(() => sink.to("md2@example.org").length === 1);
    const p2 = await simpleParser(sink.to("md2@example.org")[0]!.raw);
    expect(p2.html).toBe("<p>kept</p>");
    expect(p2.text?.trim()).toBe("plain kept");
  });

  test("raw: sent as given, subject replaced, Message-ID and Date added when missing", async () => {
    const raw = "From: Ann <ann@sender.test>\r\nTo: raw@example.org\r\nSubject: old\r\nX-Custom: kept\r\n\r\nRaw body line\r\n";
    const res = await send({ from: "ann@sender.test", to: ["raw@example.org"], subject: "new subject", raw });
    expect(res.status).toBe(202);
    await eventually(() => sink.to("raw@example.org").length === 1);
    const got = sink.to("raw@example.org")[0]!.raw;
    expect(got).toContain("X-Custom: kept\r\n");
    expect(got).toContain("Subject: new subject\r\n");
    expect(got).not.toContain("Subject: old");
    expect(got).toMatch(new RegExp(`^Message-ID: <${res.body.id}@mx\\.postroom\\.test>\\r$`, "m"));
    expect(got).toMatch(/^Date: /m);
    expect(got).toContain("\r\n\r\nRaw body line\r\n");
  });

  test("an MX on a private address is refused unless allowed", async () => {
    const strict = await startTestApp({ dnsServer: dns.address, outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}` });
    try {
      await verifiedSendingDomain(strict, dns, ACCOUNT_A, "sender.test");
      const res = await strict.json("POST", SEND, { auth: bearer(ACCOUNT_A.smtpKey), body: { ...base, to: "x@private.example" } });
      const m = await eventually(async () => {
        const x = (
          await strict.json("GET", `/api/v0.1/${ACCOUNT_A.id}/outbound_messages/${res.body.id}`, { auth: bearer(ACCOUNT_A.token) })
        ).body;
        return x.recipients[0].status === "soft_bounce" ? x : null;
      });
      expect(m.recipients[0].events.at(-1).details.smtp_response).toBe(
        "MX internal.example refused: internal.example resolves to 10.1.2.3, a private, loopback or link-local address",
      );
    } finally {
      await strict.stop();
    }
  });
});

describe("the hosted service's official client (npm cloudmailin)", () => {
  const client = (apiKey: string) =>
    new MessageClient({ username: ACCOUNT_A.outboundId, apiKey, baseURL: `http://127.0.0.1:${t.app.httpPort}/api/v0.1/` });

  test("sendMessage gets a UUID id", async () => {
    const res = await client(ACCOUNT_A.smtpKey).sendMessage({
      from: "ann@sender.test",
      to: "client@example.org",
      subject: "from the client",
      plain: "hello",
      html: "<b>hello</b>",
    });
    expect(res.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res).toMatchObject({
      from: "ann@sender.test",
      to: ["client@example.org"],
      cc: [],
      test_mode: false,
      subject: "from the client",
      tags: [],
    });
    await eventually(() => sink.to("client@example.org").length === 1);
  });

  test("wrong credentials reject", async () => {
    let error: any;
    try {
      await client("pr_wrong").sendMessage({ from: "ann@sender.test", to: "x@example.org", plain: "x" });
    } catch (e) {
      error = e;
    }
    // The client surfaces the answer's error: the word API.md section 3 fixes, then what to send.
    expect(error?.message).toStartWith("Unauthorized: send the outbound account's key (accounts.outbound.api_keys");
    expect(error?.name).toBe("CloudMailinError");
  });

  test("a message without a body rejects with body not found", async () => {
    let error: any;
    try {
      await client(ACCOUNT_A.smtpKey).sendMessage({ from: "ann@sender.test", to: "x@example.org", subject: "no body" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeDefined();
    expect(JSON.stringify(error.response?.data ?? error.message)).toContain("body not found");
  });
});
