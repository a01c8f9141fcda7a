// The incoming Details' view of a kept message: header fields in order, and the payload
// made again in each target format, with attachments' contents left out.
import { describe, expect, test } from "bun:test";
import { extractMessage } from "../../src/inbound/parse/extract.ts";
import { headerFields, PAYLOAD_VIEW_MAX_CHARS, payloadView } from "../../src/inbound/kept-message.ts";
import { buildPayload, type PayloadEnvelope } from "../../src/inbound/payload/payload.ts";

const LIMITS = { maxHeaderBytes: 1024 * 1024, maxMimeParts: 100, maxMimeDepth: 10 };

describe("headerFields", () => {
  const cases: [string, string, { name: string; value: string }[]][] = [
    [
      "CRLF, in message order",
      "From: a@x.test\r\nTo: b@y.test\r\nSubject: hi\r\n\r\nbody\r\n",
      [
        { name: "From", value: "a@x.test" },
        { name: "To", value: "b@y.test" },
        { name: "Subject", value: "hi" },
      ],
    ],
    [
      "a folded line is one field",
      "Subject: one\r\n two\r\nX-A: 1\r\n\r\n",
      [
        { name: "Subject", value: "one two" },
        { name: "X-A", value: "1" },
      ],
    ],
    ["encoded words decoded", "Subject: =?UTF-8?B?R3LDvMOfZQ==?=\r\n\r\n", [{ name: "Subject", value: "Grüße" }]],
    [
      "a repeated name stays twice",
      "Received: a\r\nReceived: b\r\n\r\n",
      [
        { name: "Received", value: "a" },
        { name: "Received", value: "b" },
      ],
    ],
    [
      "bare LF line ends",
      "From: a@x.test\nSubject: lf\n\nbody: not a header\n",
      [
        { name: "From", value: "a@x.test" },
        { name: "Subject", value: "lf" },
      ],
    ],
    ["no body at all", "Subject: only headers\r\n", [{ name: "Subject", value: "only headers" }]],
    ["raw UTF-8 read as UTF-8", "Subject: café\r\n\r\n", [{ name: "Subject", value: "café" }]],
  ];
  for (const [name, raw, want] of cases) test(name, () => expect(headerFields(Buffer.from(raw, "utf8"))).toEqual(want));
});

const envelope = {
  to: "in@postroom.test",
  recipients: ["in@postroom.test"],
  from: "a@x.test",
  helo_domain: "x.test",
  remote_ip: "192.0.2.1",
  spf: { result: "pass", domain: "x.test" },
  tls: false,
  tls_cipher: null,
  md5: "0".repeat(32),
} as unknown as PayloadEnvelope;
const MESSAGE = [
  "From: a@x.test",
  "To: in@postroom.test",
  "Subject: report",
  "MIME-Version: 1.0",
  'Content-Type: multipart/mixed; boundary="b"',
  "",
  "--b",
  "Content-Type: text/plain",
  "",
  "the text",
  "--b",
  'Content-Type: application/pdf; name="r.pdf"',
  'Content-Disposition: attachment; filename="r.pdf"',
  "Content-Transfer-Encoding: base64",
  "",
  "JVBERi0xLjQK",
  "--b--",
  "",
].join("\r\n");

describe("payloadView", () => {
  test("json+n: the payload pretty-printed, the attachment's size said instead of its content", async () => {
    const raw = Buffer.from(MESSAGE);
    const view = payloadView("json+n", raw, await extractMessage(raw, LIMITS), envelope);
    expect(view.contentType).toBe("application/json");
    const shown = JSON.parse(view.body);
    expect(shown.envelope.remote_ip).toBe("192.0.2.1");
    expect(shown.headers.subject).toBe("report");
    expect(shown.plain).toBe("the text");
    expect(shown.attachments).toEqual([
      {
        file_name: "r.pdf",
        content_type: "application/pdf",
        size: "9",
        disposition: "attachment",
        content_id: null,
        content: "(9 bytes, Base64, not shown)",
      },
    ]);
    expect(view.body).toContain('\n  "envelope": {');
  });

  test("json: headers under their names as written", async () => {
    const raw = Buffer.from(MESSAGE);
    expect(JSON.parse(payloadView("json", raw, await extractMessage(raw, LIMITS), envelope).body).headers.Subject).toBe("report");
  });

  test("multipart+n: one field per line, the file by name, type and size", async () => {
    const raw = Buffer.from(MESSAGE);
    const view = payloadView("multipart+n", raw, await extractMessage(raw, LIMITS), envelope);
    expect(view.contentType).toBe("multipart/form-data");
    const lines = view.body.split("\n");
    expect(lines).toContain("plain: the text");
    expect(lines).toContain("headers[subject]: report");
    expect(lines).toContain("envelope[spf][result]: pass");
    expect(lines).toContain('attachments[]: file "r.pdf" (application/pdf, 9 bytes)');
  });

  test("multipart (original): indexed attachments", async () => {
    const raw = Buffer.from(MESSAGE);
    expect(payloadView("multipart", raw, await extractMessage(raw, LIMITS), envelope).body.split("\n")).toContain(
      'attachments[0]: file "r.pdf" (application/pdf, 9 bytes)',
    );
  });

  test("raw: the message field, then the envelope's fields", async () => {
    const raw = Buffer.from(MESSAGE);
    const view = payloadView("raw", raw, await extractMessage(raw, LIMITS), envelope);
    expect(view.body.startsWith("message: From: a@x.test\r\n")).toBe(true);
    expect(view.body).toContain("\nenvelope[from]: a@x.test");
  });

  test("rfc822, or a message that no longer parses: the message itself", () => {
    const raw = Buffer.from(MESSAGE);
    expect(payloadView("rfc822", raw, null, envelope)).toEqual({ contentType: "message/rfc822", body: MESSAGE, truncated: false });
    expect(payloadView("json+n", raw, null, envelope).contentType).toBe("message/rfc822");
  });

  test("a long text of control characters: the view is the first part of the whole payload, cut", async () => {
    const text = "\u0001".repeat(PAYLOAD_VIEW_MAX_CHARS + 5000);
    const raw = Buffer.from(`From: a@x.test\r\nSubject: controls\r\nContent-Type: text/plain\r\n\r\n${text}`, "latin1");
    const extracted = (await extractMessage(raw, LIMITS))!;
    for (const format of ["json+n", "multipart+n"] as const) {
      const view = payloadView(format, raw, extracted, envelope);
      const whole = buildPayload(extracted.content, envelope, [], false);
      const expected =
        format === "json+n"
          ? JSON.stringify(whole, null, 2).slice(0, PAYLOAD_VIEW_MAX_CHARS)
          : `plain: ${extracted.content.plain}`.slice(0, PAYLOAD_VIEW_MAX_CHARS);
      expect([format, view.truncated, view.body.length, view.body === expected]).toEqual([format, true, PAYLOAD_VIEW_MAX_CHARS, true]);
    }
  });

  test("a body over the view's limit is cut and says so", () => {
    const raw = Buffer.from(`Subject: big\r\n\r\n${"x".repeat(PAYLOAD_VIEW_MAX_CHARS)}`);
    const view = payloadView("rfc822", raw, null, envelope);
    expect(view.truncated).toBe(true);
    expect(view.body).toHaveLength(PAYLOAD_VIEW_MAX_CHARS);
  });
});
