// Path segments and query parameters follow the rules of body text (src/api/parameter-checks.ts).
import { describe, expect, test } from "bun:test";
import { parameterTextProblem } from "../../src/api/parameter-checks.ts";

describe("parameterTextProblem", () => {
  test.each([
    ["clean parameters", { addressId: "abc" }, { query: "subject:invoice", page: "2" }, null],
    ["none at all", undefined, undefined, null],
    ["NUL in a path segment", { accountId: "a", addressId: "a\u0000b" }, {}, "path addressId: must not contain control characters"],
    ["NUL in a query parameter", {}, { address_id: "x", query: "a\u0000b" }, "query query: must not contain control characters"],
    ["ESC in a query parameter", {}, { query: "\u001b[2J" }, "query query: must not contain control characters"],
    ["a parameter given twice, the second holding NUL", {}, { query: ["ok", "a\u0000"] }, "query query: must not contain control characters"],
    ["a parameter name holding NUL is not shown", {}, { "q\u0000": "x\u0000" }, "query parameter names must not contain control characters"],
    ["tab, CR and LF pass, as in bodies (a route's own schema may refuse them)", {}, { query: "a\tb\r\nc" }, null],
    ["a lone surrogate", { id: "\ud800" }, {}, "path id: is not well-formed Unicode (it holds half of a surrogate pair)"],
  ])("%s", (_, params, query, expected) => {
    expect(parameterTextProblem(params as never, query as never)).toBe(expected as never);
  });
});
