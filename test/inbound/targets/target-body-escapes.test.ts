// The real size of a payload (issue 31): a message of control characters becomes a JSON
// body six times its size (`\u0001` for each byte). It is posted streamed, its text
// escaped a slice at a time, so no string or buffer of the whole body is ever built; the
// bytes are still exactly those of JSON.stringify, with the length known beforehand.
import { describe, expect, test } from "bun:test";
import { slicesOf, type StreamedBody } from "../../../src/inbound/payload/payload-body.ts";
import { buildPayload, type MessageContent, type PayloadEnvelope } from "../../../src/inbound/payload/payload.ts";
import { targetBody } from "../../../src/inbound/targets/target-body.ts";

const envelope: PayloadEnvelope = {
  to: "a@in.example.com",
  recipients: ["a@in.example.com"],
  from: "sender@example.org",
  helo_domain: "mail.example.org",
  remote_ip: "192.0.2.1",
  spf: { result: "pass", domain: "example.org" },
  tls: false,
  tls_cipher: null,
  md5: "0123456789abcdef0123456789abcdef",
  dkim: { result: "none", signatures: [] },
  dmarc: { result: "none", domain: null, policy: null },
};

const MB = 1024 * 1024;
const controls = (n: number) => "\u0001".repeat(n);

function contentOf(plain: string, html: string | undefined): MessageContent {
  return {
    headers: { subject: "controls" } as never,
    originalHeaders: { Subject: "controls" },
    plain,
    html,
    reply_plain: plain.slice(0, 10),
    attachments: [],
  };
}

describe("json bodies of text that JSON escapes", () => {
  // A slice that would end between the halves of a surrogate pair (16 K characters each),
  // lone surrogates, quotes, backslashes, U+2028, NUL.
  const tricky = `${"a".repeat(16_383)}😀${'\u0001"\\\u2028\u0000é\ud800x\udc00'.repeat(30_000)}😀`;
  const cases: [name: string, format: "json+n" | "json", plain: string, html: string | undefined][] = [
    ["2 MB of control characters, json+n", "json+n", controls(2 * MB), undefined],
    ["control characters in plain and html, json (original headers)", "json", controls(MB), `<p>${controls(MB)}</p>`],
    ["surrogate pairs across slices, quotes, backslashes, U+2028", "json+n", tricky, tricky],
  ];
  for (const [name, format, plain, html] of cases) {
    test(`${name}: streamed, the bytes of JSON.stringify, no slice larger than 1 MB`, async () => {
      const content = contentOf(plain, html);
      const body = await targetBody({ format, content, envelope, urls: [], raw: Buffer.alloc(0) });
      expect(typeof body === "object" && "parts" in body).toBe(true);
      const streamed = body as StreamedBody;
      const expected = Buffer.from(JSON.stringify(buildPayload(content, envelope, [], format === "json")), "utf8");
      const slices = [...slicesOf(streamed)];
      expect(Math.max(...slices.map((s) => s.length))).toBeLessThanOrEqual(MB);
      const bytes = Buffer.concat(slices);
      expect(streamed.length).toBe(expected.length);
      expect(bytes.equals(expected)).toBe(true);
    });
  }

  test("a short text is still one string (nothing to stream)", async () => {
    const body = await targetBody({
      format: "json+n",
      content: contentOf(controls(1000), undefined),
      envelope,
      urls: [],
      raw: Buffer.alloc(0),
    });
    expect(typeof body).toBe("string");
  });
});
