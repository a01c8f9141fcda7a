// headerSectionBytes: where a received message's header section ends (the header size
// limit is checked against it before anything is parsed, and again before SPF and DKIM).
import { expect, test } from "bun:test";
import { headerSectionBytes } from "../../../src/inbound/parse/parse.ts";

const cases: [string, string, number][] = [
  ["CRLF", "A: 1\r\nB: 2\r\n\r\nbody\r\n", 10],
  ["LF", "A: 1\nB: 2\n\nbody\n", 9],
  ["an LF blank line before the CRLF one", "A: 1\n\nB: 2\r\n\r\n", 4],
  ["a CRLF blank line, then LF ones in the body", "A: 1\r\n\r\nx\n\ny", 4],
  ["LF then CRLF at the end of the header section", "A: 1\n\r\n\r\nx", 5],
  ["no blank line: the whole message", "A: 1\r\nB: 2\r\n", 12],
  ["an empty header section", "\r\n\r\nbody", 0],
];
for (const [name, text, bytes] of cases) test(name, () => expect(headerSectionBytes(Buffer.from(text, "latin1"))).toBe(bytes));

// Issue 38: the search for "\n\n", which a CRLF message never has, read the whole message
// (twice per message since SPF and DKIM start before the parse). Timed against a small
// message so that the machine's load cancels out: before the fix a 16 MB message took
// thousands of times as long as a 4 KB one.
test("only the header section is read, however long the body", () => {
  const head = "From: a@b.c\r\nSubject: hello\r\n\r\n";
  const small = Buffer.from(head + "x".repeat(4 * 1024), "latin1");
  const large = Buffer.from(head + "x\r\n".repeat((16 * 1024 * 1024) / 3), "latin1");
  const timed = (raw: Buffer) => {
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) expect(headerSectionBytes(raw)).toBe(head.length - 4);
    return performance.now() - t0;
  };
  timed(small);
  timed(large);
  expect(timed(large) / timed(small)).toBeLessThan(20);
});
