// Handling a large outgoing message without copies of it (issue 15): the Base64 check of
// E11 attachments (a regexp of repeated groups failed on 7 MB strings and refused them),
// CRLF line endings made only where missing, and the header section written back in
// front of the body in the same buffer.
import { describe, expect, test } from "bun:test";
import { toCrlf } from "../../src/outbound/compose/compose.ts";
import { isBase64 } from "../../src/outbound/compose/message-input.ts";
import { joinMessage, splitMessage } from "../../src/outbound/compose/raw-headers.ts";

describe("isBase64", () => {
  const cases: [name: string, text: string, ok: boolean][] = [
    ["empty", "", true],
    ["groups of four", "QUJD", true],
    ["one padding character", "QUI=", true],
    ["two padding characters", "QQ==", true],
    ["three padding characters", "Q===", false],
    ["padding in the middle", "QQ==QUJD", false],
    ["length not a multiple of four", "QUJDR", false],
    ["a newline", "QUJD\nQUJD", false],
    ["URL-safe alphabet", "QU-_", false],
    ["a space", "QU JD", false],
  ];
  for (const [name, text, ok] of cases) test(name, () => expect(isBase64(text)).toBe(ok));

  test("an 8 MB attachment's Base64 (E11 allows 10 MB messages)", () => {
    const text = Buffer.alloc(6_000_000, 0xab).toString("base64");
    expect(text.length).toBeGreaterThan(7_900_000);
    expect(isBase64(text)).toBe(true);
    expect(isBase64(`${text.slice(0, -4)}!AAA`)).toBe(false);
  });
});

describe("toCrlf", () => {
  const cases: [name: string, input: string, output: string][] = [
    ["CRLF already", "a\r\nb\r\n", "a\r\nb\r\n"],
    ["bare LF", "a\nb\n", "a\r\nb\r\n"],
    ["mixed", "a\r\nb\nc", "a\r\nb\r\nc"],
    ["LF first", "\na", "\r\na"],
    ["a lone CR kept", "a\rb\n", "a\rb\r\n"],
    ["CR CR LF kept", "a\r\r\nb", "a\r\r\nb"],
    ["nothing to do", "abc", "abc"],
  ];
  for (const [name, input, output] of cases) {
    test(name, () => expect(toCrlf(Buffer.from(input, "latin1")).toString("latin1")).toBe(output));
  }

  test("a message with CRLF everywhere is the same buffer, not a copy", () => {
    const raw = Buffer.from("Subject: x\r\n\r\nbody\r\n");
    expect(toCrlf(raw)).toBe(raw);
  });
});

describe("joinMessage", () => {
  const message = (room: number) => {
    const text = "Subject: hello\r\nBcc: hidden@example.org\r\n\r\nthe body\r\n";
    const buf = Buffer.alloc(room + text.length);
    buf.write(text, room, "latin1");
    return buf.subarray(room);
  };

  test("with room in front: the new section written before the body in the same buffer", () => {
    const raw = message(64);
    const m = splitMessage(raw);
    m.headers.remove("bcc");
    m.headers.prepend("Message-ID", "<a-long-enough-message-id@postroom.test>");
    const joined = joinMessage(m, raw.byteOffset - 64);
    expect(joined.toString("latin1")).toBe("Message-ID: <a-long-enough-message-id@postroom.test>\r\nSubject: hello\r\n\r\nthe body\r\n");
    expect(joined.buffer).toBe(raw.buffer);
  });

  test("without room enough: a new buffer, the same bytes", () => {
    const raw = message(0);
    const m = splitMessage(raw);
    m.headers.prepend("Message-ID", "<b@postroom.test>");
    const joined = joinMessage(m, raw.byteOffset);
    expect(joined.toString("latin1")).toBe(
      "Message-ID: <b@postroom.test>\r\nSubject: hello\r\nBcc: hidden@example.org\r\n\r\nthe body\r\n",
    );
    expect(joined.buffer).not.toBe(raw.buffer);
  });
});
