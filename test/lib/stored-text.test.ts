// The NUL helpers every store-bound value goes through (src/lib/stored-text.ts).
import { describe, expect, test } from "bun:test";
import { nulPath, replaceNul, replaceNulInFields } from "../../src/lib/stored-text.ts";

describe("replaceNul: each NUL becomes U+FFFD, nothing else changes", () => {
  test.each([
    ["no NUL", "Invoice 42", "Invoice 42"],
    ["empty", "", ""],
    ["one", "Invoice\u0000 42", "Invoice\uFFFD 42"],
    ["several, and at both ends", "\u0000a\u0000\u0000b\u0000", "\uFFFDa\uFFFD\uFFFDb\uFFFD"],
    ["other control characters stay (they are shown escaped, and stored as they are)", "a\u0001\u0007\tb", "a\u0001\u0007\tb"],
    ["non-ASCII text stays", "Grüße ✓ \u{1F600}", "Grüße ✓ \u{1F600}"],
  ])("%s", (_, input, expected) => {
    expect(replaceNul(input)).toBe(expected);
  });
});

describe("replaceNulInFields: a row's string fields", () => {
  test("only strings change, in a copy; a row without NUL is returned as it is", () => {
    const row = { subject: "a\u0000b", messageId: "<x\u0000@y>", size: 10, tls: null, ok: "clean" };
    expect(replaceNulInFields(row)).toEqual({ subject: "a\uFFFDb", messageId: "<x\uFFFD@y>", size: 10, tls: null, ok: "clean" });
    expect(row.subject).toBe("a\u0000b");
    const clean = { subject: "fine", size: 1 };
    expect(replaceNulInFields(clean)).toBe(clean);
  });
});

describe("nulPath: where the first NUL of a bound value is", () => {
  test.each([
    ["a clean string", "abc", null],
    ["a number, null, a boolean", 42, null],
    ["the value itself", "a\u0000", ""],
    ["an array element", ["ok", "n\u0000"], "[1]"],
    ["a field of a row", { id: "1", subject: "s\u0000" }, ".subject"],
    ["rows, the first in order", [{ a: "ok" }, { a: "x\u0000", b: "y\u0000" }], "[1].a"],
    ["bytes may hold any byte", Buffer.from([0, 1, 0]), null],
    ["a Uint8Array too", new Uint8Array([0]), null],
    [
      "a non-plain object (an SQL fragment) is not looked into",
      new (class Fragment {
        text = "\u0000";
      })(),
      null,
    ],
  ])("%s", (_, value, expected) => {
    expect(nulPath(value)).toBe(expected);
  });

  test("a deep value does not overflow the stack", () => {
    let deep: unknown = "\u0000";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(nulPath(deep)).toBe("[0]".repeat(100_000));
  });
});
