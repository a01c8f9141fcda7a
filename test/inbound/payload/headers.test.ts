// Payload headers (src/inbound/payload/headers.ts, docs/receiving.md): keys, unfolding, MIME
// decoding, and the bytes of raw 8-bit headers read as UTF-8 where they are UTF-8.
import { describe, expect, test } from "bun:test";
import { headerText, headerValue, normalizeHeaders } from "../../../src/inbound/payload/headers.ts";
import { extractMessage } from "../../../src/inbound/parse/extract.ts";

/** A header line as mailparser gives it: one character per byte of the message. */
const bytesOf = (text: string) => Buffer.from(text, "utf8").toString("latin1");

describe("headerText", () => {
  const cases: [name: string, input: string, expected: string][] = [
    ["ASCII as it is", "plain ascii", "plain ascii"],
    ["raw UTF-8 bytes read as UTF-8", bytesOf("Grüße aus Köln ✓"), "Grüße aus Köln ✓"],
    ["raw UTF-8, 4-byte sequence", bytesOf("mail 📬"), "mail 📬"],
    ["bytes that are not UTF-8 kept as Latin-1", "caf\xe9 cr\xe8me", "café crème"],
    ["a lone continuation byte kept", "a\x80b", "a\x80b"],
    ["a string decoded already (a character above 0xFF) left alone", "Grüße ✓", "Grüße ✓"],
  ];
  for (const [name, input, expected] of cases) test(name, () => expect(headerText(input)).toBe(expected));
});

describe("headerValue", () => {
  const cases: [name: string, line: string, expected: string][] = [
    ["value after the first colon, trimmed", "Subject:  Hello: world  ", "Hello: world"],
    ["folded lines unfolded", "Subject: one\r\n two\r\n\tthree", "one two\tthree"],
    ["encoded words decoded", "Subject: =?UTF-8?B?R3LDvMOfZQ==?=", "Grüße"],
    ["raw UTF-8 read as UTF-8", bytesOf("Subject: Grüße aus Köln"), "Grüße aus Köln"],
    ["raw UTF-8 and an encoded word together", bytesOf("From: Jörg =?UTF-8?Q?M=C3=BCller?= <j@x.test>"), "Jörg Müller <j@x.test>"],
    ["no colon: empty", "garbage", ""],
  ];
  for (const [name, line, expected] of cases) test(name, () => expect(headerValue(line)).toBe(expected));
});

test("normalizeHeaders: lower snake keys, repeated headers as arrays in order", () => {
  const lines = [
    { key: "x-trace", line: "X-Trace: first" },
    { key: "subject", line: bytesOf("Subject: Grüße") },
    { key: "x-trace", line: "X-Trace: second" },
    { key: "message-id", line: "Message-ID: <a@b>" },
  ];
  expect(normalizeHeaders(lines)).toEqual({ x_trace: ["first", "second"], subject: "Grüße", message_id: "<a@b>" });
});

test("a message with raw UTF-8 headers (SMTPUTF8) yields them readable in the payload, as its subject is", async () => {
  // Three headers in UTF-8, one in Latin-1, as real mail mixes them.
  const message = Buffer.concat([
    Buffer.from("From: Jörg <jörg@x.test>\r\nTo: a@b.test\r\nSubject: Grüße aus Köln\r\n", "utf8"),
    Buffer.from("X-Latin: caf\xe9\r\n\r\nHallo\r\n", "latin1"),
  ]);
  const { content, subject } = await extractMessage(message, { maxHeaderBytes: 65536, maxMimeDepth: 20, maxMimeParts: 100 });
  expect(content.headers).toEqual({ from: "Jörg <jörg@x.test>", to: "a@b.test", subject: "Grüße aus Köln", x_latin: "café" });
  expect(subject).toBe("Grüße aus Köln");
});
