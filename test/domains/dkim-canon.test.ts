// RFC 6376's relaxed canonicalizations and the choice of covered fields
// (src/domains/dkim-canon.ts), as tables; the RFC's own example of section 3.4.5 first.
import { describe, expect, test } from "bun:test";
import { coveredFields, relaxedBody, relaxedBodyChunks, relaxedHeader, splitMessage } from "../../src/domains/dkim-canon.ts";

describe("RFC 6376 section 3.4.5's example", () => {
  const message = "A: X\r\nB : Y\t\r\n\tZ  \r\n\r\n C \r\nD \t E\r\n\r\n\r\n";
  const { fields, body } = splitMessage(message);

  test("the headers, relaxed", () => {
    expect(fields.map((f) => relaxedHeader(f.text)).join("")).toBe("a:X\r\nb:Y Z\r\n");
  });
  test("the body, relaxed", () => {
    expect(relaxedBody(body)).toBe(" C\r\nD E\r\n");
  });
});

describe("relaxedHeader", () => {
  test.each([
    ["Subject: hello", "subject:hello\r\n"],
    ["SUBJECT:hello", "subject:hello\r\n"],
    ["Subject :  a \t b  ", "subject:a b\r\n"],
    ["Subject: a\r\n  b\r\n\tc", "subject:a b c\r\n"],
    ["Subject:", "subject:\r\n"],
    // 0xA0 (latin1 for a UTF-8 continuation byte) is not white space: it stays.
    ["Subject: caf\u00c3\u00a9 \u00a0", "subject:caf\u00c3\u00a9 \u00a0\r\n"],
  ])("%j → %j", (field, expected) => {
    expect(relaxedHeader(field)).toBe(expected);
  });
});

describe("relaxedBody", () => {
  test.each([
    ["", ""],
    ["\r\n\r\n", ""],
    ["a", "a\r\n"],
    ["a\r\n", "a\r\n"],
    ["a  \t\r\n\r\n\r\n", "a\r\n"],
    ["a\r\n\r\nb\r\n", "a\r\n\r\nb\r\n"],
    ["  lead\r\n", " lead\r\n"],
    // A bare LF ends a line, as the SMTP client sends it as CRLF.
    ["a \nb\n\n", "a\r\nb\r\n"],
    ["x\u00a0\r\n", "x\u00a0\r\n"],
  ])("%j → %j", (body, expected) => {
    expect(relaxedBody(body)).toBe(expected);
  });
});

test("a large body comes in pieces, and they make what the RFC's rules say, line by line", () => {
  // The rules written the plain way, on an array of lines, to compare with.
  const reference = (body: string) => {
    const lines = body.split(/\r?\n/).map((l) => l.replace(/[ \t]+/g, " ").replace(/ $/, ""));
    while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
    return lines.length === 0 ? "" : `${lines.join("\r\n")}\r\n`;
  };
  const pieces = ["word", "  ", "\t", "x \t y", "\r\n", "\n", "\r\n\r\n", "\u00e9\u00a0", "\r"];
  let body = "";
  for (let i = 0; body.length < 400_000; i++) body += pieces[(i * 7 + (i >> 3)) % pieces.length];
  body += " \t\r\n\r\n\n";
  const chunks: string[] = [];
  relaxedBodyChunks(body, (c) => chunks.push(c));
  expect(chunks.length).toBeGreaterThan(3);
  expect(chunks.join("")).toBe(reference(body));
  expect(relaxedBody(body)).toBe(reference(body));
});

describe("splitMessage", () => {
  test.each([
    ["no body", "From: a\r\nTo: b\r\n", ["from", "to"], ""],
    ["an empty body", "From: a\r\n\r\n", ["from"], ""],
    ["a folded field stays one field", "Subject: a\r\n b\r\nFrom: c\r\n\r\nbody\r\n", ["subject", "from"], "body\r\n"],
    ["bare LF line ends", "From: a\nTo: b\n\nbody\n", ["from", "to"], "body\n"],
    ["a line without a colon is no field", "From: a\r\ngarbage\r\n\r\nx", ["from"], "x"],
    ["white space before the colon", "From : a\r\n\r\n", ["from"], ""],
  ])("%s", (_, text, keys, body) => {
    const split = splitMessage(text);
    expect(split.fields.map((f) => f.key)).toEqual(keys);
    expect(split.body).toBe(body);
  });

  test("a folded field keeps its lines", () => {
    expect(splitMessage("Subject: a\r\n\tb\r\n\r\n").fields[0]!.text).toBe("Subject: a\r\n\tb");
  });
});

describe("coveredFields", () => {
  const { fields } = splitMessage("From: a\r\nReceived: x\r\nTo: b\r\nTo: c\r\nSubject: s\r\nX-Other: o\r\n\r\n");

  test("every listed field, bottom up, as a verifier takes them; unlisted ones left out", () => {
    const { covered, h } = coveredFields(fields, ["from", "to", "subject", "cc"], []);
    expect(covered.map((f) => f.text)).toEqual(["Subject: s", "To: c", "To: b", "From: a"]);
    expect(h).toEqual(["Subject", "To", "To", "From"]);
  });
  test("an oversigned name is listed once more, and covers nothing more", () => {
    const { covered, h } = coveredFields(fields, ["from"], ["From"]);
    expect(covered.map((f) => f.text)).toEqual(["From: a"]);
    expect(h).toEqual(["From", "From"]);
  });
  test("names match without case", () => {
    expect(coveredFields(fields, ["SUBJECT"], []).h).toEqual(["Subject"]);
  });
});
