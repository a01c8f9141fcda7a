// The text rules every request body meets before its route's schema.
import { describe, expect, test } from "bun:test";
import { bodyTextProblem, textRule } from "../../src/http/text-checks.ts";

describe("textRule", () => {
  const cases: [string, string, string | null][] = [
    ["plain text", "Réunion demain 🎉", null],
    ["tab, LF and CR (bodies of mail are many lines)", "a\tb\r\nc\nd", null],
    ["NUL", "a\u0000b", "must not contain control characters"],
    ["ESC (terminal escape sequences in logs)", "\u001b[31mred", "must not contain control characters"],
    ["vertical tab", "a\u000bb", "must not contain control characters"],
    ["DEL", "a\u007fb", "must not contain control characters"],
    ["a lone high surrogate", "a\ud800", "is not well-formed Unicode (it holds half of a surrogate pair)"],
    ["a lone low surrogate", "\udc00b", "is not well-formed Unicode (it holds half of a surrogate pair)"],
    ["a whole surrogate pair", "\ud83d\ude00", null],
  ];
  for (const [name, value, expected] of cases) test(name, () => expect(textRule(value)).toBe(expected));
});

describe("bodyTextProblem", () => {
  const cases: [string, unknown, ReturnType<typeof bodyTextProblem>][] = [
    ["a clean body", { a: "x", b: [1, "y", { c: null }] }, null],
    ["a top-level field", { nickname: "a\u0000" }, { path: "nickname", message: "must not contain control characters" }],
    [
      "a field in an array of objects, first problem in document order",
      { attachments: [{ file_name: "ok" }, { file_name: "\ud800", content_type: "\u0000" }] },
      { path: "attachments[1].file_name", message: "is not well-formed Unicode (it holds half of a surrogate pair)" },
    ],
    ["a key, not shown", { headers: { "X-\u0000": "v" } }, { path: "headers", message: "a key must not contain control characters" }],
    ["a bare string body", "\u0001", { path: "", message: "must not contain control characters" }],
  ];
  for (const [name, body, expected] of cases) test(name, () => expect(bodyTextProblem(body)).toEqual(expected));

  test("a body nested far deeper than the call stack is walked without overflowing", () => {
    let deep: unknown = "\u0000";
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(bodyTextProblem(deep)?.message).toBe("must not contain control characters");
  });
});
